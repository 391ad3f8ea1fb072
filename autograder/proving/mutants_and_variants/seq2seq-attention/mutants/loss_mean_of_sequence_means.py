"""sequence_loss averages each sequence first, then the sequences (short ones weigh more)."""

import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id=0):
    tokens = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")   # (B, T)
    real = (targets != pad_id).float()
    return ((tokens * real).sum(1) / real.sum(1)).mean()
