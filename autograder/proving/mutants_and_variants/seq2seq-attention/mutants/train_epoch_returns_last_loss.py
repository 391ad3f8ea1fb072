"""train_epoch returns the last batch's loss instead of the epoch's mean."""

import torch


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    loss = None
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
    return loss.item()
