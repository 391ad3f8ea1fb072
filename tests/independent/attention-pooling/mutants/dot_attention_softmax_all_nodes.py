"""dot_attention_aggregation takes the softmax over all nodes, then zeroes non-neighbours
(no renormalisation)."""
import math

import torch


def dot_attention_aggregation(features, adjacency):
    """softmax over every u, multiplied by the adjacency afterwards."""
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores, dim=1) * adjacency.to(features.dtype)
