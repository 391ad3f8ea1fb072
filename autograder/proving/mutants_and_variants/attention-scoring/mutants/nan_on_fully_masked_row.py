"""Masked positions filled with -inf and no guard: a fully masked row gives NaN weights.

A softmax over a row of -inf is 0/0.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1)
