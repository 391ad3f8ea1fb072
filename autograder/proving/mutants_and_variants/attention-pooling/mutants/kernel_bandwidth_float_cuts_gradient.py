"""kernel_weights converts the bandwidth with float(): no gradient reaches a tensor bandwidth.

The values are right; learning the bandwidth through these weights is impossible.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    h = float(bandwidth)
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * h * h)
    return torch.softmax(scores, dim=1)
