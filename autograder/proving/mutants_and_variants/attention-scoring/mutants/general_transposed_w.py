"""General score computes k_i^T W q = q^T W^T k_i: W is used transposed.

Runs only when d_q == d_k, and then gives the wrong values.
"""

import torch


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return (keys @ W @ query.unsqueeze(-1)).squeeze(-1)     # (B, n, d) @ (d, d) @ (B, d, 1)
