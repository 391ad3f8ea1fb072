"""mean_aggregation ignores self_loops=True: the identity is never added.
"""

import torch


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    A = adjacency.to(torch.float32)
    return A / A.sum(dim=1, keepdim=True).clamp(min=1)
