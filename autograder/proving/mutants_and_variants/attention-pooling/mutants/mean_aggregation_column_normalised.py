"""mean_aggregation divides each column by its node's degree (A D^-1) instead of each row (D^-1 A).
"""

import torch


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    A = adjacency.to(torch.float32)
    if self_loops:
        A = A + torch.eye(A.shape[0])
    degree = A.sum(dim=1)
    return A / degree.clamp(min=1)[None, :]
