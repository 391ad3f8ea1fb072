"""Greedy decoding and beam search for any model that decodes step by step.

A model decodes through two methods (both translators of the course have them):

- ``start(src, src_lengths) -> state``: a dict of tensors whose first dimension is the
  batch, computed once per source (the encoder's output, a recurrent state);
- ``step(prefix, state) -> (logits, weights, state)``: the scores ``(N, V)`` of the next
  token after ``prefix`` ``(N, t)`` (``<bos>`` first), the attention of that step
  ``(N, S)``, and the state after it.

Beam search keeps, for every source, the ``beam_size`` most probable unfinished outputs;
an output that ends with ``<eos>`` leaves the beam and is remembered if it is the most
probable finished one so far. A source is done when that one is at least as probable as
every unfinished output, which can only lose probability as it grows. Scores are total
log-probabilities, without a length penalty.

Shapes: ``B`` sources, ``k`` beam size, ``N`` rows decoded at once (``B`` or ``B * k``),
``S`` source length, ``V`` target vocabulary, ``L`` output length.
"""

from __future__ import annotations

from typing import Protocol

import torch
from torch import Tensor

__all__ = ["StepDecoder", "beam_search", "greedy"]

State = dict[str, Tensor | None]


class StepDecoder(Protocol):
    """A model that decodes one token at a time (see the module's docstring)."""

    def start(self, src: Tensor, src_lengths: Tensor) -> State: ...

    def step(self, prefix: Tensor, state: State) -> tuple[Tensor, Tensor, State]: ...


def _select(state: State, rows: Tensor) -> State:
    """The state of the given rows ``(N',)`` of the batch, in that order."""
    return {key: None if value is None else value.index_select(0, rows)
            for key, value in state.items()}


@torch.no_grad()
def greedy(model: StepDecoder, src: Tensor, src_lengths: Tensor, bos_id: int, eos_id: int,
           max_len: int, pad_id: int = 0) -> tuple[Tensor, Tensor]:
    """The most probable token at every step, until ``<eos>`` or ``max_len`` tokens.

    Args:
        src: ``(B, S)`` long source ids; ``src_lengths`` ``(B,)`` their lengths.

    Returns:
        ``tokens`` ``(B, L)`` without ``<bos>``, ``pad_id`` after a row's ``<eos>``, and the
        attention ``weights`` ``(B, L, S)`` of every step.
    """
    state = model.start(src, src_lengths)
    prefix = torch.full((src.shape[0], 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.shape[0], dtype=torch.bool, device=src.device)
    tokens: list[Tensor] = []      # (B,) per step
    weights: list[Tensor] = []     # the step's attention
    for _step in range(max_len):
        logits, attention, state = model.step(prefix, state)
        y = logits.argmax(-1).masked_fill(done, pad_id)                    # (B,)
        tokens.append(y)
        weights.append(attention)
        prefix = torch.cat([prefix, y[:, None]], dim=1)
        done = done | (y == eos_id)
        if bool(done.all()):
            break
    return torch.stack(tokens, 1), torch.stack(weights, 1)


@torch.no_grad()
def beam_search(model: StepDecoder, src: Tensor, src_lengths: Tensor, bos_id: int,
                eos_id: int, max_len: int, beam_size: int = 4, pad_id: int = 0
                ) -> tuple[Tensor, Tensor]:
    """The most probable output that beam search finds, for every source.

    Args:
        src: ``(B, S)`` long source ids; ``src_lengths`` ``(B,)`` their lengths.
        max_len: Most tokens an output may have, ``<eos>`` included. A source with no
            finished output by then returns its most probable unfinished one.
        beam_size: Unfinished outputs kept per source ``k``; 1 follows the greedy path but
            returns an earlier ``<eos>`` ending if that one was more probable.

    Returns:
        ``tokens`` ``(B, L)`` without ``<bos>``, ``pad_id`` after ``<eos>``, and their total
        log-probabilities ``(B,)``.
    """
    B, k, device = src.shape[0], beam_size, src.device
    rows = torch.arange(B, device=device).repeat_interleave(k)                # (B*k,)
    state = _select(model.start(src, src_lengths), rows)
    prefix = torch.full((B * k, 1), bos_id, dtype=torch.long, device=device)
    # only the first of the k copies is alive at the start
    alive = torch.full((B, k), float("-inf"), device=device)
    alive[:, 0] = 0.0
    best = torch.full((B,), float("-inf"), device=device)                      # finished
    best_tokens = torch.full((B, max_len), pad_id, dtype=torch.long, device=device)
    base = (torch.arange(B, device=device) * k)[:, None]                       # (B, 1)
    for t in range(max_len):
        logits, _, state = model.step(prefix, state)
        logp = alive[..., None] + torch.log_softmax(logits.float(), -1).view(B, k, -1)
        # the most probable way to finish now, per source: (B,)
        ending, beam = logp[..., eos_id].max(dim=1)
        better = ending > best
        if bool(better.any()):
            best = torch.where(better, ending, best)
            origin = prefix.view(B, k, -1)[torch.arange(B, device=device), beam, 1:]
            finished = torch.cat([origin, torch.full((B, 1), eos_id, device=device)], 1)
            best_tokens[better, : t + 1] = finished[better]
        # the k most probable ways to go on: (B, k)
        logp[..., eos_id] = float("-inf")
        alive, index = logp.flatten(1).topk(k, dim=1)
        V = logp.shape[-1]
        origin_rows = (base + index // V).flatten()                            # (B*k,)
        prefix = torch.cat([prefix[origin_rows], (index % V).flatten()[:, None]], 1)
        state = _select(state, origin_rows)
        if bool((best >= alive[:, 0]).all()):
            break
    else:
        # max_len reached: a source without a finished output keeps its best unfinished one
        unfinished = best == float("-inf")
        if bool(unfinished.any()):
            first = prefix.view(B, k, -1)[:, 0, 1:]                            # (B, max_len)
            best_tokens[unfinished] = first[unfinished]
            best = torch.where(unfinished, alive[:, 0], best)
    # trim to the longest output: up to its <eos>, or all of max_len without one
    is_eos = best_tokens == eos_id
    lengths = torch.where(is_eos.any(1), is_eos.int().argmax(1) + 1, max_len)
    return best_tokens[:, : int(lengths.max()) if B else 1], best
