"""kernel_weights uses |q - k| where the Gaussian kernel squares the distance.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = -(queries[:, None] - keys[None, :]).abs() / (2 * bandwidth ** 2)
    return torch.softmax(scores, dim=1)
