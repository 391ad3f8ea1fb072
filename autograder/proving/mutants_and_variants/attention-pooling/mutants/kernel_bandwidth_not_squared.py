"""kernel_weights divides the squared distance by 2h instead of 2h^2.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * bandwidth)
    return torch.softmax(scores, dim=1)
