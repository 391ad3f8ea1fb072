"""Concat score without the tanh: v^T W [q; k_i].

Then the query's contribution is the same for every key and cancels in the softmax.
"""

import torch


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    n = keys.shape[1]
    pairs = torch.cat([query.unsqueeze(1).expand(-1, n, -1), keys], dim=-1)
    return (pairs @ W.T) @ v
