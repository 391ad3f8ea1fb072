"""aggregate converts features and W to the weights' dtype: float64 features give float32.
"""

import torch


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return weights @ features.to(weights.dtype) @ W.to(weights.dtype)
