"""Multi-head attention for the book's Transformer: PyTorch's own, with the exercise's interface.

The chapter on the Transformer builds its blocks from these parts. Its attention is
PyTorch's functional multi-head attention
(:func:`torch.nn.functional.multi_head_attention_forward`) behind the interface of the
``multihead-attention`` exercise: four projections ``q_proj``, ``k_proj``, ``v_proj`` and
``out_proj``, masks that are True where a query may attend, weights per head. The exercise
has students write that module themselves, and its graded code may not call PyTorch's
(the course's contract): this module, which students receive with the course's package,
answers none of its questions. The tests check that it computes what the exercise's
reference does, and that the exercise's grader gives it no marks.

Shapes: ``B`` batch, ``T`` queries, ``S`` keys and values, ``d_model`` model size, ``h``
heads of size ``d_model / h``.
"""

from __future__ import annotations

import torch
from torch import Tensor, nn
from torch.nn import functional

__all__ = [
    "MultiHeadAttention",
    "causal_mask",
    "padding_mask",
    "sinusoidal_positional_encoding",
]


def causal_mask(T: int, device: torch.device | str | None = None) -> Tensor:
    """``(T, T)`` bool, True on and below the diagonal: query ``t`` sees keys ``0..t``
    (PyTorch's causal mask, which marks the positions *not* to attend, inverted)."""
    hidden = nn.Transformer.generate_square_subsequent_mask(T, device=device) < 0
    return ~hidden


def padding_mask(lengths: Tensor, S: int) -> Tensor:
    """``(B, S)`` bool, True at the first ``lengths[b]`` (real) positions of row ``b``."""
    return torch.arange(S, device=lengths.device) < lengths[:, None]


class MultiHeadAttention(nn.Module):
    """``h`` heads of scaled dot-product attention side by side, then one projection.

    Head ``i`` reads output features ``[i * head_dim, (i + 1) * head_dim)`` of the query,
    key and value projections; the heads' outputs are concatenated in head order and
    projected by ``out_proj``. A query that may attend to no position gets zero weights,
    and ``out_proj`` of a zero vector.

    Args:
        d_model: Size of the inputs and the output.
        num_heads: Number of heads ``h``; must divide ``d_model``.
        bias: Whether the four projections have a bias.
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True) -> None:
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
        self.head_dim = d_model // num_heads
        self.num_heads = num_heads
        # four (d_model, d_model) projections, made in this order
        self.q_proj, self.k_proj, self.v_proj, self.out_proj = (
            nn.Linear(d_model, d_model, bias=bias) for _ in range(4))

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
        (B, T, d_model), S = query.shape, key.shape[1]
        hidden = None                          # PyTorch's polarity: True = may not attend
        empty = None                           # (B, T): queries with nothing to attend
        if mask is not None:
            allowed = mask.to(torch.bool).expand(B, T, S)
            empty = ~allowed.any(dim=-1)
            allowed = allowed | empty[..., None]     # attend anywhere, zeroed below
            hidden = (~allowed).repeat_interleave(self.num_heads, dim=0)   # (B*h, T, S)
        biases = [p.bias for p in (self.q_proj, self.k_proj, self.v_proj)]
        out, weights = functional.multi_head_attention_forward(
            query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1),
            d_model, self.num_heads, in_proj_weight=None,
            in_proj_bias=torch.cat(biases) if biases[0] is not None else None,
            bias_k=None, bias_v=None, add_zero_attn=False, dropout_p=0.0,
            out_proj_weight=self.out_proj.weight, out_proj_bias=self.out_proj.bias,
            training=self.training, need_weights=True, attn_mask=hidden,
            use_separate_proj_weight=True, q_proj_weight=self.q_proj.weight,
            k_proj_weight=self.k_proj.weight, v_proj_weight=self.v_proj.weight,
            average_attn_weights=False)
        out = out.transpose(0, 1)                                    # (B, T, d_model)
        if empty is not None and bool(empty.any()):
            weights = weights * (~empty)[:, None, :, None]              # rows of zeros
            nothing = self.out_proj(out.new_zeros(d_model))          # out_proj(0)
            out = torch.where(empty[..., None], nothing, out)
        return out, weights


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
