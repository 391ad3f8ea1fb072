"""mean_pool zeroes the rows the mask drops in place (`values[~mask] = 0`), modifying its input.
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.mean(dim=0)
    with torch.no_grad():
        values[~mask] = 0.0
    return values.sum(dim=0) / mask.sum().clamp(min=1)
