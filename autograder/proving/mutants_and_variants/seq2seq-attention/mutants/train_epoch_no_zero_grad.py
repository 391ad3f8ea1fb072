"""train_epoch never zeroes the gradients: they pile up from batch to batch."""

import torch


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    losses = []
    for batch in batches:
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)
