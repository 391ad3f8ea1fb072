"""Implementation of the multihead-attention assignment with view + transpose and masked_fill.

Heads are split with view(B, L, H, d_h).transpose(1, 2) and merged back the same way.
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V; fully masked query rows get zero weights and output."""
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        blocked = ~mask.to(torch.bool)
        filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
        weights = torch.softmax(filled, dim=-1).masked_fill(blocked, 0.0)
    return weights @ V, weights


def causal_mask(T, device=None):
    """True on and below the diagonal."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(lengths, S):
    """True at the first lengths[b] positions of row b."""
    return torch.arange(S, device=lengths.device).unsqueeze(0) < lengths.unsqueeze(1)


class MultiHeadAttention(nn.Module):
    """Multi-head attention; heads split with view + transpose."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.d_model = d_model
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        batch, tgt_len, _ = query.shape
        q = self._split(self.q_proj(query))  # (B, H, T, d_h)
        k = self._split(self.k_proj(key))
        v = self._split(self.v_proj(value))
        if mask is not None and mask.dim() >= 3:
            mask = mask.unsqueeze(-3)  # (B, T, S) -> (B, 1, T, S): the same for every head
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        merged = heads.transpose(1, 2).reshape(batch, tgt_len, self.d_model)
        return self.out_proj(merged), weights


def sinusoidal_positional_encoding(max_len, d_model):
    """PE[p, 2i] = sin(p / 10000^(2i/d)), PE[p, 2i+1] = cos(same), computed in float64."""
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position / torch.pow(10000.0, two_i / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)
    pe[:, 1::2] = torch.cos(angles)
    return pe.to(torch.float32)
