"""dot_attention_aggregation fills non-neighbours with -inf: an isolated node's row is NaN."""
import math

import torch


def dot_attention_aggregation(features, adjacency):
    """Masked softmax with -inf and no guard for empty rows."""
    scores = features @ features.T / math.sqrt(features.shape[1])
    return torch.softmax(scores.masked_fill(~adjacency, float("-inf")), dim=1)
