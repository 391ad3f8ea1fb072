"""masked_softmax fills the masked scores in place with masked_fill_, modifying its input.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    scores.masked_fill_(~mask, float("-inf"))
    scores.masked_fill_(~mask.any(dim=-1, keepdim=True), 0.0)
    return torch.softmax(scores, dim=-1).masked_fill(~mask, 0.0)
