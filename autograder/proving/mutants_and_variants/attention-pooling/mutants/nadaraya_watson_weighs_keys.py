"""nadaraya_watson sums the keys with the weights instead of the values.
"""

import torch


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    return weights @ keys, weights
