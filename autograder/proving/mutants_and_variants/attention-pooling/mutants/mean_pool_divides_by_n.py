"""mean_pool divides the masked sum by n, the number of all rows, not by the number kept.
"""

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.mean(dim=0)
    return (mask.to(values.dtype) @ values) / values.shape[0]
