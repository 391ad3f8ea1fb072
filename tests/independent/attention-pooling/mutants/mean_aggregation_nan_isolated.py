"""mean_aggregation divides by a zero degree: NaN row for an isolated node."""
import torch


def mean_aggregation(adjacency, self_loops=False):
    """D^-1 A without guarding deg = 0."""
    a = adjacency.to(torch.float32)
    if self_loops:
        a = a + torch.eye(a.shape[0])
    return a / a.sum(dim=1, keepdim=True)
