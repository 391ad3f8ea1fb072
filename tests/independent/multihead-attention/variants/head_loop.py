"""Implementation of the multihead-attention assignment with an explicit loop over the heads.

Each head projects with its own slice of the q/k/v weights; the attention uses torch.where
with -inf and replaces fully masked rows before the softmax so no NaN can appear.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    """softmax(Q K^T / sqrt(d_k)) V with a where-based mask."""
    scores = torch.matmul(Q, K.transpose(-1, -2)) * (1.0 / math.sqrt(K.shape[-1]))
    if mask is None:
        weights = F.softmax(scores, dim=-1)
        return torch.matmul(weights, V), weights
    mask = torch.broadcast_to(mask.to(torch.bool), scores.shape)
    filled = torch.where(mask, scores, torch.full_like(scores, float("-inf")))
    has_any = mask.any(dim=-1, keepdim=True)
    filled = torch.where(has_any, filled, torch.zeros_like(filled))  # keep softmax finite
    weights = torch.where(mask, F.softmax(filled, dim=-1), torch.zeros_like(filled))
    return torch.matmul(weights, V), weights


def causal_mask(T, device=None):
    """Key index j may be attended by query index i when j <= i."""
    idx = torch.arange(T, device=device)
    return idx.unsqueeze(1) >= idx.unsqueeze(0)


def padding_mask(lengths, S):
    """One row per sequence, built in a loop."""
    positions = torch.arange(S, device=lengths.device)
    return torch.stack([positions < n for n in lengths.unbind(0)])


class MultiHeadAttention(nn.Module):
    """Multi-head attention as a loop over heads using slices of the projection weights."""

    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError("d_model must be divisible by num_heads")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    @staticmethod
    def _head_projection(layer, x, rows):
        bias = None if layer.bias is None else layer.bias[rows]
        return F.linear(x, layer.weight[rows], bias)

    def forward(self, query, key, value, mask=None):
        # each head works on (B, T, d_h), so a (T, S), (B, 1, S) or (B, T, S) mask applies as is
        outputs, weights = [], []
        for h in range(self.num_heads):
            rows = slice(h * self.head_dim, (h + 1) * self.head_dim)
            q = self._head_projection(self.q_proj, query, rows)  # (B, T, d_h)
            k = self._head_projection(self.k_proj, key, rows)
            v = self._head_projection(self.v_proj, value, rows)
            out_h, w_h = scaled_dot_product_attention(q, k, v, mask)
            outputs.append(out_h)
            weights.append(w_h)
        concatenated = torch.cat(outputs, dim=-1)  # heads in order along the features
        return self.out_proj(concatenated), torch.stack(weights, dim=1)


def sinusoidal_positional_encoding(max_len, d_model):
    """Fills the columns pair by pair: column 2i gets sin, column 2i+1 gets cos."""
    position = torch.arange(max_len, dtype=torch.float64)
    columns = []
    for i in range(d_model // 2):
        angle = position / (10000.0 ** (2 * i / d_model))
        columns.append(torch.sin(angle))
        columns.append(torch.cos(angle))
    return torch.stack(columns, dim=1).float()
