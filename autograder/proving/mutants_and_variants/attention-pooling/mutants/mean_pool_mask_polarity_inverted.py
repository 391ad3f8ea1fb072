"""mean_pool averages the rows where the mask is False: True read as "leave out".
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.mean(dim=0)
    kept = (~mask).to(values.dtype)
    return (kept @ values) / kept.sum().clamp(min=1)
