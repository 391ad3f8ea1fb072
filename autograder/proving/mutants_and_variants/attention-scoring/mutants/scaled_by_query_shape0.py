"""Scaled dot score divides by sqrt(query.shape[0]), the batch size, instead of sqrt(d_k).

The student took the query's first dimension for its length, forgetting the batch dimension.
"""

import math

import torch


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    scores = torch.einsum("bd,bnd->bn", query, keys)
    return scores / math.sqrt(query.shape[0])
