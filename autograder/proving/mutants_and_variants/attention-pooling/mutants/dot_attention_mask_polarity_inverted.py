"""dot_attention_aggregation masks the neighbours instead of the non-neighbours.

The adjacency is read as "leave out": each node attends to the nodes it is not linked to.
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T / math.sqrt(features.shape[1])
    blocked = adjacency
    filled = scores.masked_fill(blocked, float("-inf"))
    filled = filled.masked_fill(blocked.all(dim=1, keepdim=True), 0.0)
    return torch.softmax(filled, dim=1).masked_fill(blocked, 0.0)
