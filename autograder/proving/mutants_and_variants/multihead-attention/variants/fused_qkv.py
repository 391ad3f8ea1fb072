"""A fused q/k/v projection, as nn.MultiheadAttention does: one (3 d_model, d_model) matmul.

For self-attention (query is key is value) the three projections are one F.linear whose
output is reshaped to (B, T, 3, H, d_h) and permuted; otherwise each input takes its block
of the fused weight.
"""

import torch
import torch.nn.functional as F
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads={num_heads} does not divide d_model={d_model}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def forward(self, query, key, value, mask=None):
        B, T, D = query.shape
        H, d_h = self.num_heads, self.head_dim
        weight = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])
        bias = None if self.q_proj.bias is None else torch.cat(
            [self.q_proj.bias, self.k_proj.bias, self.v_proj.bias])
        if query is key and key is value:
            qkv = F.linear(query, weight, bias).reshape(B, T, 3, H, d_h)
            q, k, v = qkv.permute(2, 0, 3, 1, 4).unbind(0)          # 3 x (B, H, T, d_h)
        else:
            w_q, w_k, w_v = weight.chunk(3)
            b_q, b_k, b_v = (None, None, None) if bias is None else bias.chunk(3)
            q, k, v = (F.linear(x, w, b).reshape(B, x.shape[1], H, d_h).permute(0, 2, 1, 3)
                       for x, w, b in ((query, w_q, b_q), (key, w_k, b_k), (value, w_v, b_v)))
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        return self.out_proj(heads.permute(0, 2, 1, 3).reshape(B, T, D)), weights
