"""mean_aggregation computes A D^-1 (columns normalised) instead of D^-1 A (rows)."""
import torch


def mean_aggregation(adjacency, self_loops=False):
    """Adjacency divided by the degree of the column node."""
    a = adjacency.to(torch.float32)
    if self_loops:
        a = a + torch.eye(a.shape[0])
    deg = a.sum(dim=1)
    return a / deg.clamp(min=1).unsqueeze(0)
