"""Loops over examples and heads: the attention sees one (T, d_h) matrix at a time.

The attention is written for 2-D inputs only; masks are indexed per example.
"""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("num_heads must divide d_model")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T, _ = query.shape
        S = key.shape[1]
        q, k, v = self.q_proj(query), self.k_proj(key), self.v_proj(value)
        full = None if mask is None else torch.broadcast_to(mask, (B, T, S))
        rows, maps = [], []
        for b in range(B):
            heads, weights = [], []
            for h in range(self.num_heads):
                cols = slice(h * self.head_dim, (h + 1) * self.head_dim)
                out, w = scaled_dot_product_attention(q[b, :, cols], k[b, :, cols],
                                                      v[b, :, cols],
                                                      None if full is None else full[b])
                heads.append(out)                                       # (T, d_h)
                weights.append(w)                                       # (T, S)
            rows.append(torch.cat(heads, dim=-1))                       # (T, d_model)
            maps.append(torch.stack(weights))                           # (H, T, S)
        return self.out_proj(torch.stack(rows)), torch.stack(maps)


def sinusoidal_positional_encoding(max_len, d_model):
    pe = torch.zeros(max_len, d_model)
    for p in range(max_len):
        for i in range(0, d_model, 2):
            angle = p / 10000 ** (i / d_model)
            pe[p, i] = math.sin(angle)
            pe[p, i + 1] = math.cos(angle)
    return pe
