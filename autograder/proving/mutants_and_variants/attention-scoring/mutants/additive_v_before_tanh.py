"""Additive score applies v before the tanh: tanh(v^T (W_q q + W_k k_i)).
"""

import torch


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    hidden = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T      # (B, n, h)
    return torch.tanh(hidden @ v)
