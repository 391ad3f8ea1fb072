"""mean_aggregation divides by a degree of 0: NaN in the row of a node without neighbours.
"""

import torch


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    A = adjacency.to(torch.float32)
    if self_loops:
        A = A + torch.eye(A.shape[0])
    return A / A.sum(dim=1, keepdim=True)
