"""A Python loop over the heads, each with its slices of the projection weights (F.linear).

The attention fills masked scores with the dtype's most negative number (never NaN) and
multiplies the weights by the mask afterwards.
"""

import math

import torch
import torch.nn.functional as F
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(-1, -2)) / math.sqrt(K.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights * mask
    return torch.matmul(weights, V), weights


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads:
            raise ValueError(f"{num_heads} heads cannot share {d_model} features evenly")
        self.num_heads = num_heads
        self.head_dim = d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _head(self, layer, x, h):
        rows = slice(h * self.head_dim, (h + 1) * self.head_dim)
        return F.linear(x, layer.weight[rows], None if layer.bias is None else layer.bias[rows])

    def forward(self, query, key, value, mask=None):
        outputs, weights = [], []
        for h in range(self.num_heads):        # (B, L, d_h) per head: the mask applies as is
            out, w = scaled_dot_product_attention(self._head(self.q_proj, query, h),
                                                  self._head(self.k_proj, key, h),
                                                  self._head(self.v_proj, value, h), mask)
            outputs.append(out)
            weights.append(w)
        return self.out_proj(torch.cat(outputs, dim=-1)), torch.stack(weights, dim=1)
