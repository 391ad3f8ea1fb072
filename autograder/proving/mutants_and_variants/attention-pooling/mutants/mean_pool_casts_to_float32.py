"""mean_pool computes in float32 (`.float()`): float64 values give a float32 result.
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    values = values.float()
    if mask is None:
        return values.mean(dim=0)
    kept = mask.float()
    return (kept @ values) / kept.sum().clamp(min=1)
