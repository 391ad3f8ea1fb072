"""Implementation of the multihead-attention assignment with one fused q/k/v projection.

The three projection weights are concatenated into a (3D, D) matrix; query, key and value are
concatenated along time, projected once, and the right block of rows and features is taken
for each. Heads are split with unflatten + permute; the mask is applied with torch.where.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Scores, a where-based mask with the dtype's lowest value, softmax, zeroing, product."""
    d_k = Q.shape[-1]
    scores = torch.matmul(Q, K.transpose(-2, -1)).div(math.sqrt(d_k))
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        mask = mask.to(torch.bool)
        lowest = torch.tensor(torch.finfo(scores.dtype).min, dtype=scores.dtype)
        weights = torch.softmax(torch.where(mask, scores, lowest), dim=-1)
        weights = torch.where(mask, weights, torch.zeros((), dtype=scores.dtype))
    return torch.matmul(weights, V), weights


def causal_mask(T, device=None):
    """Query index minus key index must be non-negative."""
    rows = torch.arange(T, device=device).view(T, 1)
    cols = torch.arange(T, device=device).view(1, T)
    return (rows - cols) >= 0


def padding_mask(lengths, S):
    """Compare a (1, S) position row with the (B, 1) lengths."""
    return torch.arange(S, device=lengths.device).view(1, S).lt(lengths.view(-1, 1))


class MultiHeadAttention(nn.Module):
    """Multi-head attention with a single fused projection for queries, keys and values."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"cannot split d_model={d_model} into {num_heads} heads")
        self.d_model = d_model
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _heads(self, x):
        return x.unflatten(-1, (self.num_heads, self.head_dim)).permute(0, 2, 1, 3)

    def forward(self, query, key, value, mask=None):
        d, tgt_len, src_len = self.d_model, query.shape[1], key.shape[1]
        weight = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        bias = None
        if self.q_proj.bias is not None:
            bias = torch.cat([self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
        projected = F.linear(torch.cat([query, key, value], dim=1), weight, bias)
        q = projected[:, :tgt_len, :d]
        k = projected[:, tgt_len : tgt_len + src_len, d : 2 * d]
        v = projected[:, tgt_len + src_len :, 2 * d :]
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(
            self._heads(q), self._heads(k), self._heads(v), mask
        )
        merged = heads.permute(0, 2, 1, 3).flatten(-2)
        return self.out_proj(merged), weights


def sinusoidal_positional_encoding(max_len, d_model):
    """sin and cos halves computed separately, then interleaved by index assignment."""
    half = torch.arange(d_model // 2, dtype=torch.float64)
    inv_freq = 1.0 / torch.pow(torch.tensor(10000.0, dtype=torch.float64), 2.0 * half / d_model)
    angles = torch.outer(torch.arange(max_len, dtype=torch.float64), inv_freq)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, torch.arange(0, d_model, 2)] = angles.sin()
    pe[:, torch.arange(1, d_model, 2)] = angles.cos()
    return pe.float()
