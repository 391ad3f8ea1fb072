"""train_epoch sums detached losses in a tensor and counts batches as it goes; the loss is
computed with ignore_index through log_softmax and nll_loss."""

import torch
import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id=0):
    log_probs = F.log_softmax(logits, dim=-1).flatten(0, 1)
    return F.nll_loss(log_probs, targets.flatten(), ignore_index=pad_id)


def train_epoch(model, optimizer, batches, pad_id=0, clip=1.0):
    model.train(True)
    total, count = torch.zeros(()), 0
    for batch in batches:
        optimizer.zero_grad(set_to_none=True)
        logits = model(batch.src, batch.src_lengths, batch.tgt_in)[0]
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=clip)
        optimizer.step()
        total += loss.detach()
        count += 1
    return float(total / count)
