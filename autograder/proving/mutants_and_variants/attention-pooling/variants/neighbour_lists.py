"""Graphs as lists of neighbours: index_select and a softmax per node; pooling by boolean indexing.

Rows are written with index_put (out of place), so gradients flow to the features.
"""

import math

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    kept = values if mask is None else values[mask]
    if kept.shape[0] == 0:
        return values.new_zeros(values.shape[1])
    return kept.mean(dim=0)


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    N = adjacency.shape[0]
    out = torch.zeros(N, N)
    for v in range(N):
        neighbours = adjacency[v].nonzero().flatten().tolist() + ([v] if self_loops else [])
        if neighbours:
            out[v, neighbours] = 1.0 / len(neighbours)
    return out


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    N, M = features.shape
    out = features.new_zeros(N, N)
    for v in range(N):
        neighbours = adjacency[v].nonzero().flatten()
        if len(neighbours) == 0:
            continue
        keys = features.index_select(0, neighbours)                  # (k, M)
        weights = torch.softmax(keys @ features[v] / math.sqrt(M), dim=0)
        row = torch.zeros(N, dtype=features.dtype).index_put((neighbours,), weights)
        out = out.index_put((torch.tensor([v]),), row.unsqueeze(0))
    return out
