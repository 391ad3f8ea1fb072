"""Implementation of the multihead-attention assignment with the heads folded into the batch.

Queries, keys and values become (B*H, L, d_h) tensors and attention is a pair of bmm calls;
the mask is expanded to (B, H, T, S) and folded the same way.
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """Softmax on scores with a very negative fill, then multiplied by the mask."""
    scale = math.sqrt(Q.shape[-1])
    scores = torch.matmul(Q / scale, K.transpose(-2, -1))
    if mask is None:
        weights = scores.softmax(dim=-1)
    else:
        allowed = mask.to(torch.bool)
        scores = scores.masked_fill(~allowed, torch.finfo(scores.dtype).min)
        weights = scores.softmax(dim=-1) * allowed.to(scores.dtype)
    return torch.matmul(weights, V), weights


def causal_mask(T, device=None):
    """Lower-triangular ones, as booleans."""
    return torch.tril(torch.ones(T, T, device=device)).bool()


def padding_mask(lengths, S):
    """Positions expanded to (B, S) and compared with the lengths."""
    positions = torch.arange(S, device=lengths.device).expand(lengths.shape[0], S)
    return positions < lengths.unsqueeze(-1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention computed as one batched attention over B*H sequences."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model % num_heads != 0")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _fold(self, x):
        batch, length, _ = x.shape
        x = x.reshape(batch, length, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        return x.reshape(batch * self.num_heads, length, self.head_dim)

    def forward(self, query, key, value, mask=None):
        batch, tgt_len, d_model = query.shape
        src_len = key.shape[1]
        q = self._fold(self.q_proj(query))
        k = self._fold(self.k_proj(key))
        v = self._fold(self.v_proj(value))
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            mask = mask.expand(batch, self.num_heads, tgt_len, src_len)
            mask = mask.reshape(batch * self.num_heads, tgt_len, src_len)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B*H, T, d_h)
        heads = heads.reshape(batch, self.num_heads, tgt_len, self.head_dim)
        merged = heads.permute(0, 2, 1, 3).reshape(batch, tgt_len, d_model)
        weights = weights.reshape(batch, self.num_heads, tgt_len, src_len)
        return self.out_proj(merged), weights


def sinusoidal_positional_encoding(max_len, d_model):
    """Every column at once: exponent 2*(col // 2), sin on even columns, cos on odd ones."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    column = torch.arange(d_model)
    exponent = (2 * (column // 2)).to(torch.float64) / d_model
    angles = position / 10000.0**exponent
    even = (column % 2 == 0).unsqueeze(0)
    return torch.where(even, torch.sin(angles), torch.cos(angles)).to(torch.float32)
