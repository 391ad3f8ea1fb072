"""mean_aggregation adds self-loops but divides by the degrees without them.

Rows sum to more than 1.
"""

import torch


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    A = adjacency.to(torch.float32)
    degree = A.sum(dim=1, keepdim=True).clamp(min=1)
    if self_loops:
        A = A + torch.eye(A.shape[0])
    return A / degree
