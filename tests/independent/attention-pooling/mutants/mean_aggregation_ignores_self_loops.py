"""mean_aggregation ignores self_loops=True (never adds the identity)."""
import torch


def mean_aggregation(adjacency, self_loops=False):
    """D^-1 A whatever self_loops says."""
    a = adjacency.to(torch.float32)
    return a / a.sum(dim=1, keepdim=True).clamp(min=1)
