"""dot_attention_aggregation lets each node attend to itself as well as to its neighbours.
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    allowed = adjacency | torch.eye(adjacency.shape[0], dtype=torch.bool)
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=1)
