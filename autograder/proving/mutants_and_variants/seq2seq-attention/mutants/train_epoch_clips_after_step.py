"""train_epoch clips the gradients after the optimizer has already used them."""

import torch


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        optimizer.step()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        losses.append(loss.item())
    return sum(losses) / len(losses)
