"""mean_aggregation adds the self-loop but divides by the degree without it (rows sum > 1)."""
import torch


def mean_aggregation(adjacency, self_loops=False):
    """(A + I) divided by the degree of A only."""
    a = adjacency.to(torch.float32)
    deg = a.sum(dim=1, keepdim=True).clamp(min=1)
    if self_loops:
        a = a + torch.eye(a.shape[0])
    return a / deg
