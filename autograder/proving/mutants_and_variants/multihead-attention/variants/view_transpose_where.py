"""view + transpose for the heads; the mask applied with torch.where, mask and heads broadcast.

Masks, causal and padding, are built with comparisons of aranges.
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(-2, -1)) * (1.0 / math.sqrt(Q.size(-1)))
    if mask is None:
        weights = scores.softmax(dim=-1)
    else:
        mask = torch.broadcast_to(mask, scores.shape)
        empty = ~mask.any(dim=-1, keepdim=True)
        filled = torch.where(mask | empty, scores, torch.full_like(scores, float("-inf")))
        weights = torch.where(mask, filled.softmax(dim=-1), torch.zeros_like(scores))
    return torch.matmul(weights, V), weights


def causal_mask(T, device=None):
    i = torch.arange(T, device=device)
    return i[:, None] >= i[None, :]


def padding_mask(lengths, S):
    return torch.arange(S, device=lengths.device)[None, :] < lengths[:, None]


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be a multiple of num_heads")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

    def _split(self, x):                                   # (B, L, d_model) -> (B, H, L, d_h)
        return x.unflatten(-1, (self.num_heads, self.head_dim)).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        q, k, v = (self._split(p(x)) for p, x in ((self.q_proj, query), (self.k_proj, key),
                                                   (self.v_proj, value)))
        if mask is not None:
            mask = mask if mask.dim() < 3 else mask[:, None]
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.out_proj(heads.transpose(1, 2).flatten(-2)), weights
