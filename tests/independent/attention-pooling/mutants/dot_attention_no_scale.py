"""dot_attention_aggregation forgets the 1/sqrt(M) scaling of the scores."""
import torch


def dot_attention_aggregation(features, adjacency):
    """Neighbour softmax of unscaled x_v . x_u."""
    scores = features @ features.T
    has = adjacency.any(dim=1, keepdim=True)
    w = torch.softmax(scores.masked_fill(~(adjacency | ~has), float("-inf")), dim=1)
    return w * adjacency.to(w.dtype)
