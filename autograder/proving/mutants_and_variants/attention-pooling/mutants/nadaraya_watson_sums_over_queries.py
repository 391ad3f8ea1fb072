"""nadaraya_watson sums the weighted values over the queries (dim 0) instead of over the keys.
"""

import torch


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    return (weights * values[None, :]).sum(dim=0), weights
