"""mean_pool divides by the number of kept rows even when it is 0: NaN.

A mask that keeps nothing gives 0/0.
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.mean(dim=0)
    kept = mask.to(values.dtype)
    return (kept @ values) / kept.sum()
