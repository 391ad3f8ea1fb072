"""Implementation of the multihead-attention assignment written with einsum throughout.

The projection weights are viewed as (H, d_h, d_model) so that every head is an einsum index;
the softmax is written by hand (shift by the detached row maximum, exponentiate, normalise).
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """einsum scores and a hand-written masked softmax."""
    scores = torch.einsum("...td,...sd->...ts", Q, K) / math.sqrt(Q.size(-1))
    if mask is not None:
        scores = scores.masked_fill(~mask.to(torch.bool), float("-inf"))
    row_max = scores.detach().amax(dim=-1, keepdim=True)
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(scores - row_max)  # exactly 0 where masked
    total = exps.sum(dim=-1, keepdim=True)
    weights = exps / torch.where(total > 0, total, torch.ones_like(total))
    out = torch.einsum("...ts,...sd->...td", weights, V)
    return out, weights


def causal_mask(T, device=None):
    """Everything that is not strictly above the diagonal."""
    return ~torch.triu(torch.ones(T, T, dtype=torch.bool, device=device), diagonal=1)


def padding_mask(lengths, S):
    """lengths[b] > position."""
    return lengths[:, None] > torch.arange(S, device=lengths.device)[None, :]


class MultiHeadAttention(nn.Module):
    """Multi-head attention with per-head weight tensors and einsum."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _project(self, layer, x):
        weight = layer.weight.reshape(self.num_heads, self.head_dim, -1)  # (H, d_h, D)
        heads = torch.einsum("bld,hed->bhle", x, weight)
        if layer.bias is not None:
            heads = heads + layer.bias.reshape(1, self.num_heads, 1, self.head_dim)
        return heads

    def forward(self, query, key, value, mask=None):
        q = self._project(self.q_proj, query)
        k = self._project(self.k_proj, key)
        v = self._project(self.v_proj, value)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)  # (B, H, T, d_h)
        out_weight = self.out_proj.weight.reshape(-1, self.num_heads, self.head_dim)
        out = torch.einsum("bhte,ohe->bto", heads, out_weight)
        if self.out_proj.bias is not None:
            out = out + self.out_proj.bias
        return out, weights


def sinusoidal_positional_encoding(max_len, d_model):
    """Frequencies exp(-ln(10000) * 2i / d); sin and cos interleaved with stack + reshape."""
    position = torch.arange(max_len, dtype=torch.float64)[:, None]
    frequency = torch.exp(
        torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model)
    )
    angles = position * frequency[None, :]  # (max_len, d/2)
    pe = torch.stack([torch.sin(angles), torch.cos(angles)], dim=-1)  # (max_len, d/2, 2)
    return pe.reshape(max_len, d_model).to(torch.float32)
