"""Masking by multiplying the scores by the mask: masked scores become 0, not -inf.

exp(0) = 1, so padded keys still get weight.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is not None:
        scores = scores * mask
    return torch.softmax(scores, dim=-1)
