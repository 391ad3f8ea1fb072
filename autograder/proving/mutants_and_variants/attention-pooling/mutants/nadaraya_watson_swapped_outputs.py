"""nadaraya_watson returns (weights, predictions) instead of (predictions, weights).
"""

import torch


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    return weights, weights @ values
