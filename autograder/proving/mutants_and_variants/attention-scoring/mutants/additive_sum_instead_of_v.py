"""Additive score sums the tanh units instead of weighting them with v.
"""

import torch


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    hidden = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T)   # (B, n, h)
    return hidden.sum(dim=-1)
