"""dot_attention_aggregation: -inf for non-neighbours only, NaN for a node without neighbours.

A row of a node without neighbours is all -inf, and its softmax is 0/0.
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores.masked_fill(~adjacency, float("-inf")), dim=1)
