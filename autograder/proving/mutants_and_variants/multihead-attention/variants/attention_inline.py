"""MultiHeadAttention.forward computes each head's attention itself, without calling
scaled_dot_product_attention."""

import math

import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not a multiple of num_heads={num_heads}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T, _ = query.shape
        S = key.shape[1]
        H, d = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, d).transpose(1, 2)          # (B, H, T, d)
        k = self.k_proj(key).view(B, S, H, d).transpose(1, 2)            # (B, H, S, d)
        v = self.v_proj(value).view(B, S, H, d).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d)                  # (B, H, T, S)
        if mask is not None:
            allowed = torch.broadcast_to(mask, (B, T, S)).unsqueeze(1)   # (B, 1, T, S)
            scores = scores.masked_fill(~allowed, float("-inf"))
            nothing = ~allowed.any(dim=-1, keepdim=True)                 # (B, 1, T, 1)
            scores = scores.masked_fill(nothing, 0.0)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~allowed, 0.0)
        out = (weights @ v).transpose(1, 2).reshape(B, T, H * d)
        return self.out_proj(out), weights
