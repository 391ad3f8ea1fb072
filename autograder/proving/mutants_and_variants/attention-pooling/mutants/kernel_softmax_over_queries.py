"""kernel_weights takes the softmax over the queries (dim=0): columns sum to 1, not rows.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * bandwidth ** 2)
    return torch.softmax(scores, dim=0)
