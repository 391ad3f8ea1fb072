"""Numerically unstable softmax: exponentiates raw scores without subtracting the max.

Large scores overflow to inf and the weights become NaN.
"""

import torch


def masked_softmax(scores, mask=None):
    """Softmax over the last dimension; True in `mask` means the position may be attended."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.to(torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    exps = torch.exp(filled)  # exactly 0 where masked
    total = exps.sum(dim=-1, keepdim=True)
    safe_total = torch.where(total > 0, total, torch.ones_like(total))
    return exps / safe_total
