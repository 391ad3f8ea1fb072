"""kernel_weights drops the minus sign of the scores: the farthest key gets the most weight.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = (queries[:, None] - keys[None, :]) ** 2 / (2 * bandwidth ** 2)
    return torch.softmax(scores, dim=1)
