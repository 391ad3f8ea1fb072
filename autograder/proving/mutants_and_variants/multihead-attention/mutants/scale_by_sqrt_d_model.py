"""Scores divided by sqrt(d_model) instead of sqrt(head_dim) (attention written inside forward).

The model's size is used where the size of one head belongs: every head's softmax is too flat.
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
        B, T, d_model = query.shape
        S, H, d_h = key.shape[1], self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, d_h).transpose(1, 2)
        k = self.k_proj(key).view(B, S, H, d_h).transpose(1, 2)
        v = self.v_proj(value).view(B, S, H, d_h).transpose(1, 2)
        scores = q @ k.transpose(-2, -1) / math.sqrt(d_model)          # should be sqrt(d_h)
        if mask is not None:
            if mask.dim() == 3:
                mask = mask.unsqueeze(1)
            scores = scores.masked_fill(~mask, float("-inf"))
            scores = scores.masked_fill(~mask.any(-1, keepdim=True), 0.0)
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        concat = (weights @ v).transpose(1, 2).reshape(B, T, d_model)
        return self.out_proj(concat), weights
