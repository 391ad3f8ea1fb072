"""Softmax over the batch dimension (dim=0) instead of over the keys (dim=-1).

Each column sums to 1 instead of each row; with batch size 1 every weight becomes 1.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=0)
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = filled.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=0).masked_fill(~mask, 0.0)
