"""Concat score stacks [k_i; q] instead of [q; k_i].

The key comes first, so the wrong columns of W multiply the query and the key.
"""

import torch


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    repeated = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    pairs = torch.cat([keys, repeated], dim=-1)
    return torch.tanh(pairs @ W.T) @ v
