"""sequence_loss sums the token cross-entropies instead of averaging them."""

import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id=0):
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1),
                           ignore_index=pad_id, reduction="sum")
