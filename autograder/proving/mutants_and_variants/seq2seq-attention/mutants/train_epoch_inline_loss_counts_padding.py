"""train_epoch computes the token cross-entropy itself, padded positions included."""

import torch
import torch.nn.functional as F


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train()
    total, count = 0.0, 0
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = F.cross_entropy(logits.flatten(0, 1), batch.tgt_out.flatten())
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        total += loss.item()
        count += 1
    return total / count
