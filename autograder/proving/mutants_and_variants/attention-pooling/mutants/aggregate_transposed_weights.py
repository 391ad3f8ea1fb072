"""aggregate multiplies by the transposed weights: weights.T @ features @ W.
"""

import torch


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return weights.to(features.dtype).T @ features @ W
