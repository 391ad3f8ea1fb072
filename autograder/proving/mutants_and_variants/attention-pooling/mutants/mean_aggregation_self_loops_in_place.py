"""mean_aggregation adds the self-loops with adjacency.fill_diagonal_(True), modifying its input.
"""

import torch


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    if self_loops:
        adjacency.fill_diagonal_(True)
    A = adjacency.to(torch.float32)
    return A / A.sum(dim=1, keepdim=True).clamp(min=1)
