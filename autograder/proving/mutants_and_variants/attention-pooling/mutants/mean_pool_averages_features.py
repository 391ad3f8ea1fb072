"""mean_pool averages over the last dimension (the features) instead of over the rows.
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.mean(dim=-1)
    kept = mask.to(values.dtype)
    return (values * kept[:, None]).sum(dim=-1) / kept.sum().clamp(min=1)
