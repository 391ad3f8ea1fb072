"""dot_attention_aggregation: softmax over all nodes, then non-neighbours zeroed.

The neighbours' weights are not renormalised: rows do not sum to 1.
"""

import math

import torch


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores, dim=1) * adjacency.to(features.dtype)
