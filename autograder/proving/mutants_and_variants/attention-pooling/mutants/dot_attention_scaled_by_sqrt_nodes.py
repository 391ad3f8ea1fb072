"""dot_attention_aggregation divides the scores by sqrt(N), the number of nodes, instead of sqrt(M).
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T / math.sqrt(features.shape[0])
    filled = scores.masked_fill(~adjacency, float("-inf"))
    filled = filled.masked_fill(~adjacency.any(dim=1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=1).masked_fill(~adjacency, 0.0)
