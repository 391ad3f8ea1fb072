"""attend computes its softmax itself and applies the mask after it."""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    scores = score(query, keys)                                         # (B, n)
    top = scores.amax(dim=-1, keepdim=True)
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))  # a fully masked row
    exps = torch.exp(scores - top)                                      # exp(-inf) = 0
    total = exps.sum(dim=-1, keepdim=True)
    weights = exps / torch.where(total > 0, total, torch.ones_like(total))
    if mask is not None:
        weights = weights * mask
    return torch.einsum("bn,bnd->bd", weights, values), weights
