"""Mask applied after an ordinary softmax: masked weights are zeroed but not renormalised.

The remaining weights of a row with padding no longer sum to 1.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return weights
