"""dot_attention_aggregation forgets to divide the dot products by sqrt(M).
"""

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T
    filled = scores.masked_fill(~adjacency, float("-inf"))
    filled = filled.masked_fill(~adjacency.any(dim=1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=1).masked_fill(~adjacency, 0.0)
