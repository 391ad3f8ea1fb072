"""A small encoder–decoder Transformer built on multi-head attention with the exercise's interface.

Every attention in the model is :class:`attention_course.multihead.MultiHeadAttention`, the
interface of the ``multihead-attention`` exercise (computed by PyTorch's own); the rest is
what Vaswani et al. (2017) put around it: residual connections, layer normalisation, a
position-wise feed-forward network and sinusoidal position encodings. The model has the interface of
:class:`attention_course.seq2seq.RNNTranslator` (``forward``, ``generate``, ``start``,
``step``), so the same training loop, metrics and decoders serve both.

Shapes: ``B`` batch, ``S`` source length, ``T`` target length, ``d`` model size ``d_model``,
``h`` heads, ``V`` target vocabulary size.
"""

from __future__ import annotations

import math

import torch
from torch import Tensor, nn

from attention_course.decoding import greedy
from attention_course.multihead import (
    MultiHeadAttention,
    causal_mask,
    padding_mask,
    sinusoidal_positional_encoding,
)

__all__ = ["DecoderLayer", "EncoderLayer", "FeedForward", "TransformerTranslator"]


class FeedForward(nn.Module):
    """The position-wise network ``W_2 relu(W_1 x + b_1) + b_2``, the same at every position.

    Args:
        d_model: Input and output size ``d``.
        d_ff: Hidden size.
    """

    def __init__(self, d_model: int, d_ff: int) -> None:
        super().__init__()
        self.net = nn.Sequential(nn.Linear(d_model, d_ff), nn.ReLU(), nn.Linear(d_ff, d_model))

    def forward(self, x: Tensor) -> Tensor:
        """``(..., d)`` -> ``(..., d)``."""
        return self.net(x)


class EncoderLayer(nn.Module):
    """Self-attention, then a feed-forward network, each with a residual.

    Post-norm (Vaswani et al.): ``x = LayerNorm(x + sublayer(x))``.
    Pre-norm (Xiong et al., 2020): ``x = x + sublayer(LayerNorm(x))``.

    Args:
        d_model: Model size ``d``.
        num_heads: Heads ``h`` of the self-attention.
        d_ff: Hidden size of the feed-forward network.
        norm_first: Pre-norm if True, post-norm if False.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *,
                 norm_first: bool = True) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)

    def forward(self, x: Tensor, mask: Tensor) -> tuple[Tensor, Tensor]:
        """One layer.

        Args:
            x: ``(B, S, d)`` the source positions.
            mask: ``(B, 1, S)`` bool, True at real source tokens.

        Returns:
            ``(B, S, d)`` and the self-attention weights ``(B, h, S, S)``.
        """
        if self.norm_first:
            normed = self.norm1(x)
            attended, weights = self.self_attn(normed, normed, normed, mask)
            x = x + attended
            x = x + self.ffn(self.norm2(x))
        else:
            attended, weights = self.self_attn(x, x, x, mask)
            x = self.norm1(x + attended)
            x = self.norm2(x + self.ffn(x))
        return x, weights


class DecoderLayer(nn.Module):
    """Causal self-attention, cross-attention, a feed-forward network.

    Each of the three sublayers sits inside a residual connection,
    normalised before (pre-norm) or after (post-norm) as in
    :class:`EncoderLayer`; the cross-attention reads the encoder.

    Args:
        d_model: Model size ``d``.
        num_heads: Heads ``h`` of both attentions.
        d_ff: Hidden size of the feed-forward network.
        norm_first: Pre-norm if True, post-norm if False.
    """

    def __init__(self, d_model: int, num_heads: int, d_ff: int, *,
                 norm_first: bool = True) -> None:
        super().__init__()
        self.norm_first = norm_first
        self.self_attn = MultiHeadAttention(d_model, num_heads)
        self.cross_attn = MultiHeadAttention(d_model, num_heads)
        self.ffn = FeedForward(d_model, d_ff)
        self.norm1, self.norm2, self.norm3 = (
            nn.LayerNorm(d_model) for _ in range(3))

    def forward(self, y: Tensor, memory: Tensor, self_mask: Tensor,
                memory_mask: Tensor) -> tuple[Tensor, Tensor]:
        """One layer.

        Args:
            y: ``(B, T, d)`` the target positions written so far.
            memory: ``(B, S, d)`` the encoder's output.
            self_mask: ``(T, T)`` bool, causal: ``t`` sees ``0..t``.
            memory_mask: ``(B, 1, S)`` bool, True at real source tokens.

        Returns:
            ``(B, T, d)`` and the cross-attention weights ``(B, h, T, S)``.
        """
        if self.norm_first:
            normed = self.norm1(y)
            y = y + self.self_attn(normed, normed, normed, self_mask)[0]
            attended, weights = self.cross_attn(self.norm2(y), memory,
                                                memory, memory_mask)
            y = y + attended
            y = y + self.ffn(self.norm3(y))
        else:
            y = self.norm1(y + self.self_attn(y, y, y, self_mask)[0])
            attended, weights = self.cross_attn(y, memory, memory,
                                                memory_mask)
            y = self.norm2(y + attended)
            y = self.norm3(y + self.ffn(y))
        return y, weights


class TransformerTranslator(nn.Module):
    """Encoder–decoder Transformer with sinusoidal positions and a tied output layer.

    Args:
        src_vocab_size: Number of source token ids.
        tgt_vocab_size: Number of target token ids ``V``.
        d_model: Model size ``d`` (even).
        num_heads: Heads ``h`` of every attention; must divide ``d_model``.
        num_layers: Encoder layers, and as many decoder layers.
        d_ff: Hidden size of the feed-forward networks.
        norm_first: Pre-norm layers (and a final LayerNorm after each stack) if True,
            post-norm layers if False.
        max_len: Longest source or target the position table covers.
        pad_id: Padding id of both vocabularies.
    """

    def __init__(
        self,
        src_vocab_size: int,
        tgt_vocab_size: int,
        d_model: int = 64,
        num_heads: int = 4,
        num_layers: int = 2,
        d_ff: int = 128,
        *,
        norm_first: bool = True,
        max_len: int = 512,
        pad_id: int = 0,
    ) -> None:
        super().__init__()
        self.pad_id, self.d_model, self.norm_first = pad_id, d_model, norm_first
        self.src_embed = nn.Embedding(src_vocab_size, d_model, padding_idx=pad_id)
        self.tgt_embed = nn.Embedding(tgt_vocab_size, d_model, padding_idx=pad_id)
        for embedding in (self.src_embed, self.tgt_embed):
            # entries of size d^-1/2, so that the scaled embeddings (x sqrt(d)) are of
            # size 1, as the position encodings: neither drowns the other
            nn.init.normal_(embedding.weight, std=d_model ** -0.5)
            embedding.weight.data[pad_id] = 0.0
        self.register_buffer("positions", sinusoidal_positional_encoding(max_len, d_model),
                             persistent=False)
        self.encoder = nn.ModuleList(
            EncoderLayer(d_model, num_heads, d_ff, norm_first=norm_first)
            for _ in range(num_layers))
        self.decoder = nn.ModuleList(
            DecoderLayer(d_model, num_heads, d_ff, norm_first=norm_first)
            for _ in range(num_layers))
        # pre-norm leaves each stack's output unnormalised: one LayerNorm at its end
        self.encoder_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.decoder_norm = nn.LayerNorm(d_model) if norm_first else nn.Identity()
        self.readout = nn.Linear(d_model, tgt_vocab_size)

    def _embed(self, embedding: nn.Embedding, ids: Tensor) -> Tensor:
        """``(B, L)`` ids -> ``(B, L, d)``: scaled embeddings plus positions."""
        length = ids.shape[1]
        if length > self.positions.shape[0]:
            raise ValueError(f"sequence of {length} tokens, the model covers "
                             f"{self.positions.shape[0]}")
        return embedding(ids) * math.sqrt(self.d_model) + self.positions[:length]

    def encode(self, src: Tensor, src_lengths: Tensor) -> tuple[Tensor, Tensor, list[Tensor]]:
        """Run the encoder.

        Args:
            src: ``(B, S)`` long source ids, right-padded.
            src_lengths: ``(B,)`` long, real lengths (>= 1).

        Returns:
            ``memory`` ``(B, S, d)``, ``memory_mask`` ``(B, 1, S)`` (True at real tokens)
            and each layer's self-attention weights ``(B, h, S, S)``.
        """
        memory_mask = padding_mask(src_lengths, src.shape[1])[:, None, :]  # (B, 1, S)
        x = self._embed(self.src_embed, src)
        weights = []
        for layer in self.encoder:
            x, w = layer(x, memory_mask)
            weights.append(w)
        return self.encoder_norm(x), memory_mask, weights

    def decode(self, tgt_in: Tensor, memory: Tensor, memory_mask: Tensor
               ) -> tuple[Tensor, list[Tensor]]:
        """Run the decoder on every target position at once.

        Args:
            tgt_in: ``(B, T)`` long, ``<bos>`` followed by the target so far.
            memory: ``(B, S, d)`` from :meth:`encode`.
            memory_mask: ``(B, 1, S)`` from :meth:`encode`.

        Returns:
            ``logits`` ``(B, T, V)`` and each layer's cross-attention weights
            ``(B, h, T, S)``.
        """
        y = self._embed(self.tgt_embed, tgt_in)
        self_mask = causal_mask(tgt_in.shape[1], device=tgt_in.device)     # (T, T)
        weights = []
        for layer in self.decoder:
            y, w = layer(y, memory, self_mask, memory_mask)
            weights.append(w)
        return self.readout(self.decoder_norm(y)), weights

    def forward(self, src: Tensor, src_lengths: Tensor, tgt_in: Tensor) -> tuple[Tensor, Tensor]:
        """Teacher-forced decoding.

        Returns:
            ``logits`` ``(B, T, V)`` and the last layer's cross-attention averaged over its
            heads, ``(B, T, S)``.
        """
        memory, memory_mask, _ = self.encode(src, src_lengths)
        logits, weights = self.decode(tgt_in, memory, memory_mask)
        return logits, weights[-1].mean(dim=1)

    # -- step-by-step decoding (attention_course.decoding) ---------------------------------

    def start(self, src: Tensor, src_lengths: Tensor) -> dict[str, Tensor]:
        """Encode the source once for decoding: ``memory`` ``(B, S, d)`` and its mask."""
        memory, memory_mask, _ = self.encode(src, src_lengths)
        return {"memory": memory, "memory_mask": memory_mask}

    def step(self, prefix: Tensor, state: dict[str, Tensor]
             ) -> tuple[Tensor, Tensor, dict[str, Tensor]]:
        """Scores of the next token after ``prefix`` ``(B, t)`` (``<bos>`` first).

        The decoder reruns on the whole prefix (no cache): the sequences here are short.

        Returns:
            ``logits`` ``(B, V)``, the last layer's head-averaged cross-attention of the
            new position ``(B, S)``, and ``state`` unchanged.
        """
        logits, weights = self.decode(prefix, state["memory"], state["memory_mask"])
        return logits[:, -1], weights[-1][:, :, -1].mean(dim=1), state

    @torch.no_grad()
    def generate(self, src: Tensor, src_lengths: Tensor, bos_id: int, eos_id: int,
                 max_len: int) -> tuple[Tensor, Tensor]:
        """Greedy decoding, as :meth:`attention_course.seq2seq.RNNTranslator.generate`.

        Returns:
            ``tokens`` ``(B, L)`` without ``<bos>``, ``pad_id`` after each row's ``<eos>``;
            ``weights`` ``(B, L, S)``.
        """
        return greedy(self, src, src_lengths, bos_id, eos_id, max_len, pad_id=self.pad_id)
