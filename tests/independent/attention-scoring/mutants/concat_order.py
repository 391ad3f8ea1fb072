"""Concat score concatenates [k_i; q] instead of [q; k_i] (key first).

Otherwise a straightforward matmul/bmm implementation.
"""

import torch


def concat_score(query, keys, W, v):
    """v^T tanh(W [q; k_i]) with W (h, d_q + d_k), v (h,)."""
    n = keys.shape[1]
    expanded = query.unsqueeze(1).expand(-1, n, -1)  # (B, n, d_q)
    joined = torch.cat([keys, expanded], dim=-1)  # (B, n, d_k + d_q)
    hidden = torch.tanh(joined @ W.T)  # (B, n, h)
    return hidden @ v
