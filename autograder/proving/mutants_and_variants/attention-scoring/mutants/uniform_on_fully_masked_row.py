"""Masked scores filled with -1e9: no NaN, but a fully masked row gets uniform weights, not 0.

The usual "large negative number" trick; all-masked rows become a softmax over equal scores.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, -1e9)
    return torch.softmax(scores, dim=-1)
