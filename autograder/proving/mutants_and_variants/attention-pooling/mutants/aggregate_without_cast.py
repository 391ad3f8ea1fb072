"""aggregate does not convert the weights: float32 weights times float64 features raise.
"""

import torch


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return weights @ features @ W
