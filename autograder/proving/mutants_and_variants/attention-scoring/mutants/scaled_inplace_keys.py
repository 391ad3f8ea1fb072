"""scaled_dot_score scales the keys in place (`keys /= sqrt(d)`), modifying the caller's tensor.
"""

import math

import torch


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    keys /= math.sqrt(keys.shape[-1])
    return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)
