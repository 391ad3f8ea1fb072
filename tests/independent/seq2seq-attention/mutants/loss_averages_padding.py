"""`sequence_loss` averages over padding too: plain F.cross_entropy without ignore_index."""

import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id=0):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
