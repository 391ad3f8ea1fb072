"""Scaled dot score divides by d_k instead of sqrt(d_k).

The student remembered "divide by the dimension" but forgot the square root.
"""

import torch


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    d = keys.shape[-1]
    return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1) / d
