"""train_epoch compares the logits with tgt_in, the decoder's input, instead of tgt_out."""

import torch


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_in, pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)
