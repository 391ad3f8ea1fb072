"""Modifies the caller's scores in place (masked_fill_) before taking the softmax.

Otherwise a straightforward matmul/bmm implementation.
"""

import torch


def masked_softmax(scores, mask=None):
    """Softmax over the last dimension; True in `mask` means the position may be attended."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool)
    filled = scores.masked_fill_(~mask, float("-inf"))
    row_max = filled.amax(dim=-1, keepdim=True).detach()
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(filled - row_max)  # exactly 0 where masked
    total = exps.sum(dim=-1, keepdim=True)
    safe_total = torch.where(total > 0, total, torch.ones_like(total))
    return exps / safe_total
