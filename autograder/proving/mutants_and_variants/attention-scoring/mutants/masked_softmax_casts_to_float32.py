"""masked_softmax computes in scores.float() "for stability" and returns float32 for float64 input.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    scores = scores.float()
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = filled.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=-1).masked_fill(~mask, 0.0)
