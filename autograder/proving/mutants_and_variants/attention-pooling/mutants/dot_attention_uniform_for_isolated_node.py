"""dot_attention_aggregation gives a node without neighbours weights 1/N, not zeros.

The isolated row is filled with 0 before the softmax but not zeroed after it.
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T / math.sqrt(features.shape[1])
    filled = scores.masked_fill(~adjacency, float("-inf"))
    isolated = ~adjacency.any(dim=1, keepdim=True)
    filled = filled.masked_fill(isolated, 0.0)
    return torch.softmax(filled, dim=1)
