"""einsum throughout: projection weights viewed as (H, d_h, d_model), every head an index.

The positional encoding interleaves sin and cos with stack + reshape, computed in float32.
"""

import math

import torch
from torch import nn


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.einsum("...td,...sd->...ts", Q, K) / math.sqrt(Q.shape[-1])
    if mask is not None:
        blocked = ~mask
        empty = blocked.all(dim=-1, keepdim=True)
        scores = scores.masked_fill(blocked & ~empty, float("-inf")).masked_fill(empty, 0.0)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return torch.einsum("...ts,...sd->...td", weights, V), weights


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

    def _project(self, layer, x):                        # (B, L, D) -> (B, H, L, d_h)
        w = layer.weight.view(self.num_heads, self.head_dim, -1)
        out = torch.einsum("bld,hed->bhle", x, w)
        return out if layer.bias is None else out + layer.bias.view(self.num_heads, 1,
                                                                    self.head_dim)

    def forward(self, query, key, value, mask=None):
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(self._project(self.q_proj, query),
                                                      self._project(self.k_proj, key),
                                                      self._project(self.v_proj, value), mask)
        w_out = self.out_proj.weight.view(-1, self.num_heads, self.head_dim)   # (D, H, d_h)
        out = torch.einsum("bhte,ohe->bto", heads, w_out)
        return (out if self.out_proj.bias is None else out + self.out_proj.bias), weights


def sinusoidal_positional_encoding(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float32)[:, None]
    frequency = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float32)
                          * (-math.log(10000.0) / d_model))
    angles = position * frequency                                            # (max_len, d/2)
    return torch.stack([angles.sin(), angles.cos()], dim=-1).reshape(max_len, d_model)
