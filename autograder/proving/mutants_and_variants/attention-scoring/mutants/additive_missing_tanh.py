"""Additive score without the tanh: v^T (W_q q + W_k k_i).
"""

import torch


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    projected_query = (query @ W_q.T).unsqueeze(1)
    projected_keys = keys @ W_k.T
    return (projected_query + projected_keys) @ v
