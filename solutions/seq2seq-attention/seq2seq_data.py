"""Data for the exercise: German number words and their digits, in padded batches.

``number_words_de.tsv`` (next to this file) lists every number from 0 to 9999 as its
German word, cut into pieces, and its digits::

    drei hundert vier und zwanzig       3 2 4

German says the units before the tens ("four and twenty"), so a translator has to look
back and forth in the source to write the digits in order: a small task with a real
alignment problem, which a CPU learns in seconds.

Shapes: ``B`` batch, ``S`` longest source in the batch, ``T`` longest target + 1.
"""

from __future__ import annotations

import random
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

PAD, BOS, EOS = "<pad>", "<bos>", "<eos>"
DATA_FILE = Path(__file__).with_name("number_words_de.tsv")

Pair = tuple[list[str], list[str]]      # (source tokens, target tokens)


class Vocab:
    """Token <-> id. Ids 0, 1, 2 are ``<pad>``, ``<bos>``, ``<eos>``; the rest follow the
    order in which ``tokens`` first name them."""

    pad_id, bos_id, eos_id = 0, 1, 2

    def __init__(self, tokens: Iterable[str]) -> None:
        self.itos = [PAD, BOS, EOS]
        for token in tokens:
            if token not in self.itos:
                self.itos.append(token)
        self.stoi = {token: i for i, token in enumerate(self.itos)}

    def __len__(self) -> int:
        return len(self.itos)

    def encode(self, tokens: Sequence[str]) -> list[int]:
        return [self.stoi[token] for token in tokens]

    def decode(self, ids: Iterable[int]) -> list[str]:
        """Tokens of ``ids`` up to the first ``<eos>``, without padding."""
        tokens = []
        for i in ids:
            if i == self.eos_id:
                break
            if i != self.pad_id:
                tokens.append(self.itos[i])
        return tokens


@dataclass
class Batch:
    """A padded batch.

    Attributes:
        src: ``(B, S)`` long, source ids, right-padded with 0.
        src_lengths: ``(B,)`` long, real source lengths (>= 1).
        tgt_in: ``(B, T)`` long, ``<bos>`` then the target ids: the decoder's inputs.
        tgt_out: ``(B, T)`` long, the target ids then ``<eos>``: what to predict.
    """

    src: torch.Tensor
    src_lengths: torch.Tensor
    tgt_in: torch.Tensor
    tgt_out: torch.Tensor


def load_pairs(path: Path = DATA_FILE) -> list[Pair]:
    """Every (words, digits) pair of the data file, in the order of the numbers."""
    lines = Path(path).read_text(encoding="utf-8").splitlines()[1:]     # skip the header
    return [(words.split(), digits.split())
            for words, digits in (line.split("\t") for line in lines)]


def split(pairs: Sequence[Pair], n_test: int, seed: int = 0) -> tuple[list[Pair], list[Pair]]:
    """(train, test): a random ``n_test`` pairs are held out, the same for the same seed."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    return [pairs[i] for i in order[n_test:]], [pairs[i] for i in order[:n_test]]


def make_batch(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab) -> Batch:
    """Encode and right-pad ``pairs`` into one :class:`Batch`."""
    sources = [src_vocab.encode(s) for s, _ in pairs]
    targets = [tgt_vocab.encode(t) for _, t in pairs]
    B, S = len(pairs), max(map(len, sources))
    T = max(map(len, targets)) + 1
    src = torch.zeros(B, S, dtype=torch.long)
    tgt_in = torch.zeros(B, T, dtype=torch.long)
    tgt_out = torch.zeros(B, T, dtype=torch.long)
    for b, (s, t) in enumerate(zip(sources, targets, strict=True)):
        src[b, :len(s)] = torch.tensor(s)
        tgt_in[b, :len(t) + 1] = torch.tensor([Vocab.bos_id, *t])
        tgt_out[b, :len(t) + 1] = torch.tensor([*t, Vocab.eos_id])
    lengths = torch.tensor([len(s) for s in sources], dtype=torch.long)
    return Batch(src, lengths, tgt_in, tgt_out)


def batches(pairs: Sequence[Pair], src_vocab: Vocab, tgt_vocab: Vocab, batch_size: int,
            seed: int = 0) -> Iterator[Batch]:
    """One epoch of batches of ``pairs`` in a random order fixed by ``seed``."""
    order = list(range(len(pairs)))
    random.Random(seed).shuffle(order)
    for start in range(0, len(order), batch_size):
        yield make_batch([pairs[i] for i in order[start:start + batch_size]],
                         src_vocab, tgt_vocab)


def show_alignment(weights: torch.Tensor, src_tokens: Sequence[str],
                   tgt_tokens: Sequence[str], title: str = "", ax=None):
    """Draw attention weights (T, S) as a heatmap: a row per output token (y axis), a
    column per source token (x axis), darker = more attention."""
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(0.6 * len(src_tokens) + 1.5,
                                      0.45 * len(tgt_tokens) + 1.2))
    image = ax.imshow(weights.detach().cpu().numpy(), cmap="Reds", vmin=0, vmax=1)
    ax.set_xticks(range(len(src_tokens)), src_tokens, rotation=45, ha="right")
    ax.set_yticks(range(len(tgt_tokens)), tgt_tokens)
    ax.set_xlabel("source token (key)")
    ax.set_ylabel("output token (query)")
    ax.set_title(title)
    ax.figure.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
    return ax
