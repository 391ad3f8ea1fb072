"""Additive score with W_q and W_k swapped: W_k q + W_q k_i.

Runs only when d_q == d_k, and then gives the wrong values.
"""

import torch


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    projected_query = (query @ W_k.T).unsqueeze(1)
    projected_keys = keys @ W_q.T
    return torch.tanh(projected_query + projected_keys) @ v
