"""Concat score splits W into query and key blocks at d_k instead of d_q.

Equivalent when d_q == d_k; crashes (or mixes columns) otherwise.
"""

import torch


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    d_k = keys.shape[-1]
    W_q, W_k = W[:, :d_k], W[:, d_k:]
    hidden = (query @ W_q.T).unsqueeze(1) + keys @ W_k.T
    return torch.tanh(hidden) @ v
