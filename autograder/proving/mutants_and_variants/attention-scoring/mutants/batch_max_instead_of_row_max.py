"""Stable softmax subtracting the maximum of the whole batch instead of each row's maximum.

A row whose scores are far below the batch maximum underflows to 0 / 0 = NaN.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    exps = torch.exp(scores - scores.max().detach()).masked_fill(~mask, 0.0)
    total = exps.sum(dim=-1, keepdim=True)
    has_any = mask.any(dim=-1, keepdim=True)
    return exps / torch.where(has_any, total, torch.ones_like(total))
