"""kernel_weights forgets the 2 of 2h^2: softmax(-(q - k)^2 / h^2).
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = -(queries[:, None] - keys[None, :]) ** 2 / bandwidth ** 2
    return torch.softmax(scores, dim=1)
