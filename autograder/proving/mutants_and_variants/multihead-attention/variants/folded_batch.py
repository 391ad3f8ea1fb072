"""Heads folded into the batch: (B*H, L, d_h) tensors and torch.bmm, the mask expanded.

The attention uses bmm (so it expects 3-D inputs, which is all this module gives it) and
its masked softmax is written by hand with exp.
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    lead = Q.shape[:-2]
    T, S = Q.shape[-2], K.shape[-2]
    q, k, v = (x.reshape(-1, *x.shape[-2:]) for x in (Q, K, V))       # (N, L, d)
    scores = torch.bmm(q, k.transpose(1, 2)) / math.sqrt(q.shape[-1])
    allowed = torch.ones_like(scores, dtype=torch.bool) if mask is None else \
        torch.broadcast_to(mask, (*lead, T, S)).reshape(-1, T, S)
    top = scores.masked_fill(~allowed, float("-inf")).amax(-1, keepdim=True).detach()
    top = torch.where(torch.isinf(top), torch.zeros_like(top), top)
    exps = torch.exp((scores - top).masked_fill(~allowed, float("-inf")))     # 0 if masked
    total = exps.sum(-1, keepdim=True)
    weights = exps / torch.where(total > 0, total, torch.ones_like(total))
    out = torch.bmm(weights, v)
    return out.reshape(*lead, T, V.shape[-1]), weights.reshape(*lead, T, S)


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

    def _fold(self, x):                                  # (B, L, d_model) -> (B*H, L, d_h)
        B, L, _ = x.shape
        x = x.reshape(B, L, self.num_heads, self.head_dim).permute(0, 2, 1, 3)
        return x.reshape(B * self.num_heads, L, self.head_dim)

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        S, H = key.shape[1], self.num_heads
        if mask is not None:
            mask = mask.unsqueeze(1) if mask.dim() == 3 else mask
            mask = mask.expand(B, H, T, S).reshape(B * H, T, S)
        heads, weights = scaled_dot_product_attention(
            self._fold(self.q_proj(query)), self._fold(self.k_proj(key)),
            self._fold(self.v_proj(value)), mask)            # (B*H, T, d_h), (B*H, T, S)
        heads = heads.reshape(B, H, T, self.head_dim).permute(0, 2, 1, 3).reshape(B, T, D)
        return self.out_proj(heads), weights.reshape(B, H, T, S)
