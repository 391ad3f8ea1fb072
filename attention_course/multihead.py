"""Multi-head attention as the ``multihead-attention`` exercise defines it, for the book.

The chapter on the Transformer builds its blocks from these parts, so that the model it
trains is made of exactly what the students wrote. The interface is the exercise's (the
course's contract); the tests run this module through the exercise's hidden tests, so it
earns full marks there like any correct submission.

Shapes: ``B`` batch, ``T`` queries, ``S`` keys and values, ``d_k`` query/key size, ``d_v``
value size, ``d_model`` model size, ``h`` heads of size ``d_model / h``.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

__all__ = [
    "MultiHeadAttention",
    "causal_mask",
    "padding_mask",
    "scaled_dot_product_attention",
    "sinusoidal_positional_encoding",
]


def scaled_dot_product_attention(
    Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None = None
) -> tuple[Tensor, Tensor]:
    """``softmax(Q K^T / sqrt(d_k)) V`` over the allowed positions.

    Args:
        Q: ``(..., T, d_k)`` queries.
        K: ``(..., S, d_k)`` keys.
        V: ``(..., S, d_v)`` values.
        mask: bool, broadcastable to ``(..., T, S)``; True where a query may attend.

    Returns:
        ``out`` ``(..., T, d_v)`` and ``weights`` ``(..., T, S)``. A query that may attend
        to no position gets zero weights and a zero output.
    """
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])     # (..., T, S)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        scores = scores.masked_fill(~mask, float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        # a row with nothing to attend to is all -inf, and its softmax NaN: make it 0
        weights = weights.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)
    return weights @ V, weights


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """``(T, T)`` bool, True on and below the diagonal: query ``t`` sees keys ``0..t``."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()


def padding_mask(lengths: Tensor, S: int) -> Tensor:
    """``(B, S)`` bool, True at the first ``lengths[b]`` (real) positions of row ``b``."""
    return torch.arange(S, device=lengths.device) < lengths[:, None]


class MultiHeadAttention(nn.Module):
    """``h`` heads of scaled dot-product attention side by side, then one projection.

    Head ``i`` reads output features ``[i * head_dim, (i + 1) * head_dim)`` of the query,
    key and value projections; the heads' outputs are concatenated in head order and
    projected by ``out_proj``.

    Args:
        d_model: Size of the inputs and the output.
        num_heads: Number of heads ``h``; must divide ``d_model``.
        bias: Whether the four projections have a bias.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)

    def _split(self, x: Tensor) -> Tensor:
        """``(B, L, d_model)`` -> ``(B, h, L, head_dim)``."""
        B, L, _ = x.shape
        return x.view(B, L, self.num_heads, self.head_dim).transpose(1, 2)

    def forward(
        self, query: Tensor, key: Tensor, value: Tensor, mask: Tensor | None = None
    ) -> tuple[Tensor, Tensor]:
        """Attend from ``query`` to ``key``/``value``, every head at once.

        Args:
            query: ``(B, T, d_model)``.
            key: ``(B, S, d_model)``.
            value: ``(B, S, d_model)``.
            mask: bool, broadcastable to ``(B, T, S)``, the same for every head: a causal
                mask is ``(T, S)``, a padding mask ``(B, 1, S)``.

        Returns:
            ``out`` ``(B, T, d_model)`` and ``weights`` ``(B, h, T, S)``.
        """
        q = self._split(self.q_proj(query))                       # (B, h, T, d_h)
        k = self._split(self.k_proj(key))                         # (B, h, S, d_h)
        v = self._split(self.v_proj(value))                       # (B, h, S, d_h)
        if mask is not None:
            mask = mask.to(torch.bool).unsqueeze(-3)              # (..., 1, T, S)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        B, _, T, _ = heads.shape
        concat = heads.transpose(1, 2).reshape(B, T, -1)          # (B, T, d_model)
        return self.out_proj(concat), weights


def sinusoidal_positional_encoding(max_len: int, d_model: int) -> Tensor:
    """float32 ``(max_len, d_model)``: ``PE[p, 2i] = sin(p / 10000^(2i/d_model))`` and
    ``PE[p, 2i+1] = cos(p / 10000^(2i/d_model))``; ``d_model`` must be even."""
    if d_model % 2:
        raise ValueError(f"d_model must be even, got {d_model}")
    position = torch.arange(max_len, dtype=torch.float64)[:, None]          # (L, 1)
    rate = 10000.0 ** (-torch.arange(0, d_model, 2, dtype=torch.float64) / d_model)
    angles = position * rate                                                # (L, d/2)
    encoding = torch.stack([angles.sin(), angles.cos()], dim=-1)            # (L, d/2, 2)
    return encoding.flatten(1).to(torch.float32)
