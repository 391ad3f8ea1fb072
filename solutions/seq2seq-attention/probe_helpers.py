"""Helpers the hidden tests of `seq2seq-attention` share between grader and kernel.

Copied next to the notebook at grading time (as ``_autograder_helpers.py``), and imported
by ``hidden_tests.py`` in the grader: the same code computes the expected answer and runs
the student's code. Nothing here is an answer to the exercise: a tiny stand-in model and a
surrogate loss to test ``train_epoch`` with, and the scenario that trains the student's own
model. Only the standard library and torch.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch
from torch import nn


@dataclass
class Batch:
    """The fields of the exercise's ``Batch``: src, src_lengths, tgt_in, tgt_out."""

    src: torch.Tensor
    src_lengths: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor


def as_batches(tensors: list) -> list[Batch]:
    """[[src, src_lengths, tgt_in, tgt_out], ...] -> [Batch, ...]."""
    return [Batch(*fields) for fields in tensors]


class TinyTranslator(nn.Module):
    """A model with Seq2Seq's interface and few parameters: each target position's logits
    come from its input token's embedding plus the mean of the source embeddings."""

    def __init__(self, src_vocab: int, tgt_vocab: int, dim: int = 4) -> None:
        super().__init__()
        self.source = nn.Embedding(src_vocab, dim)
        self.target = nn.Embedding(tgt_vocab, dim)
        self.out = nn.Linear(dim, tgt_vocab)

    def forward(self, src, src_lengths, tgt_in):
        """src (B, S), src_lengths (B,), tgt_in (B, T) -> logits (B, T, V), weights (B, T, S)."""
        real = torch.arange(src.shape[1]).unsqueeze(0) < src_lengths.unsqueeze(1)   # (B, S)
        weights = real.float() / src_lengths.unsqueeze(1).float()                     # (B, S)
        summary = torch.bmm(weights.unsqueeze(1), self.source(src))                  # (B, 1, d)
        logits = self.out(torch.tanh(self.target(tgt_in) + summary))                 # (B, T, V)
        return logits, weights.unsqueeze(1).expand(-1, tgt_in.shape[1], -1)


def surrogate_loss(logits, targets, pad_id=0):
    """Not the exercise's loss: a squared error towards the targets' one-hot vectors,
    averaged over every position (padding included), so that it tells whether
    ``train_epoch`` uses the loss it is given without revealing ``sequence_loss``."""
    one_hot = nn.functional.one_hot(targets, logits.shape[-1]).to(logits.dtype)
    return 3.0 * ((logits - one_hot) ** 2).mean() + 0.0 * pad_id


def train_tiny(train_epoch, batches: list, src_vocab: int, tgt_vocab: int, lr: float,
               clip: float, epochs: int):
    """Train a seeded :class:`TinyTranslator` with ``train_epoch`` and plain SGD.

    Returns (the losses ``train_epoch`` returned, (epochs,) float64; every parameter
    afterwards, flattened).
    """
    torch.manual_seed(0)
    model = TinyTranslator(src_vocab, tgt_vocab)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = [float(train_epoch(model, optimizer, as_batches(batches), 0, clip))
              for _ in range(epochs)]
    flat = torch.cat([p.detach().reshape(-1) for p in model.parameters()])
    return torch.tensor(losses, dtype=torch.float64), flat


def train_and_evaluate(model_class, train_epoch, config: list, state: dict, batches: list,
                       held_out: list, epochs: int, lr: float):
    """Train ``model_class(*config)``, started from ``state``, with ``train_epoch`` and
    Adam; return its teacher-forced logits (B, T, V) on the held-out batch."""
    torch.manual_seed(0)
    threads = torch.get_num_threads()
    torch.set_num_threads(1)          # two graders share two cores
    try:
        model = model_class(*config)
        model.load_state_dict(state, strict=True)
        optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        for _ in range(epochs):
            train_epoch(model, optimizer, as_batches(batches), 0, 1.0)
        model.eval()
        src, src_lengths, tgt_in, _ = held_out
        with torch.no_grad():
            logits, _ = model(src, src_lengths, tgt_in)
    finally:
        torch.set_num_threads(threads)
    return logits


# --------------------------------------------------------------------------- greedy decoding

BOS, EOS = 1, 2
GREEDY_VOCAB = 10
OFF_SCRIPT = GREEDY_VOCAB - 1      # the token written when the decoder is fed a wrong y_prev
# The argmax each row of a scripted decoder produces at each step (after its eos, anything).
GREEDY_ROWS = {
    0: [[5, 6, EOS, 7, 8], [4, EOS, 3, 3, 3], [7, 3, 4, 5, EOS]],
    1: [[EOS, 5, 5], [6, 7, EOS]],
    2: [[3, 4, 5, 6, 7]],
    3: [[4, EOS, 3], [EOS, 6, 6]],
}
_STATE = 1000.0     # scripted states are _STATE + steps taken; a real s0 lies in (-1, 1)


def marked_outputs(case: int, rows: int, S: int, dim: int) -> torch.Tensor:
    """Encoder outputs (rows, S, dim) whose entry [b, 0, 0] names the case and the row, so
    that :func:`scripted_step` recognises a row however the decoder is called."""
    outputs = torch.zeros(rows, S, dim)
    for b in range(rows):
        outputs[b, 0, 0] = 100 * case + b + 0.25
    return outputs


def scripted_weights(case: int, row: int, step: int, mask: torch.Tensor) -> torch.Tensor:
    """The attention weights (S,) the scripted decoder returns for a row at a step."""
    scores = torch.arange(mask.shape[0], dtype=torch.float32) * (0.3 * (step + 1) - 0.2 * row)
    return torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=0)


def scripted_step(y_prev, s_prev, enc_outputs, src_mask):
    """A stand-in for ``Decoder.step`` whose argmax follows :data:`GREEDY_ROWS`.

    Each row is told apart by its encoder outputs and counts its steps in its state, so it
    works however ``greedy_decode`` calls it (the whole batch per step, or row by row). If
    a row is not fed back its previous argmax (``<bos>`` first), it writes
    :data:`OFF_SCRIPT` from then on. Returns logits (B, V), s (B, D), weights (B, S).
    """
    y_prev, s_prev, enc_outputs = y_prev.detach(), s_prev.detach(), enc_outputs.detach()
    B = y_prev.shape[0]
    logits = torch.zeros(B, GREEDY_VOCAB)
    states = torch.zeros_like(s_prev)
    weights = torch.zeros(B, enc_outputs.shape[1])
    for b in range(B):
        case, row = divmod(int(float(enc_outputs[b, 0, 0])), 100)
        first = float(s_prev[b, 0])
        step = 0 if abs(first) <= 1.0 else round(first - _STATE)
        script = GREEDY_ROWS[case][row]
        fed = BOS if step == 0 else script[step - 1] if step <= len(script) else None
        on_script = step < len(script) and int(y_prev[b]) == fed
        logits[b] = torch.linspace(0.0, 1.0, GREEDY_VOCAB)
        logits[b, script[step] if on_script else OFF_SCRIPT] = 5.0
        states[b] = _STATE + step + 1
        weights[b] = scripted_weights(case, row, step, src_mask[b])
    return logits, states, weights


HELPERS = {"surrogate_loss": surrogate_loss, "train_tiny": train_tiny,
           "train_and_evaluate": train_and_evaluate, "scripted_step": scripted_step}
