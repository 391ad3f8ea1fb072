"""Scaled dot score divides by sqrt(n), the number of keys, instead of sqrt(d_k).

`keys.shape[1]` is the number of keys; the key dimension is `keys.shape[-1]`.
"""

import math

import torch


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return dot_score(query, keys) / math.sqrt(keys.shape[1])
