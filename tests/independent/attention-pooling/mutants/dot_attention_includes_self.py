"""dot_attention_aggregation lets node v attend to itself (softmax over N(v) plus v)."""
import math

import torch


def dot_attention_aggregation(features, adjacency):
    """Softmax over the neighbours and the node itself."""
    n = features.shape[0]
    allowed = adjacency | torch.eye(n, dtype=torch.bool)
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=1)
