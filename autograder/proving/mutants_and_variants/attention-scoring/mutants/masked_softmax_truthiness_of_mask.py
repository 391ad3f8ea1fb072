"""masked_softmax tests `if not mask:` on a tensor, which raises for any mask of several entries.

The no-mask check should be `if mask is None:`.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if not mask:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask, float("-inf"))
    filled = filled.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=-1).masked_fill(~mask, 0.0)
