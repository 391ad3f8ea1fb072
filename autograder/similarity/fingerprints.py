"""Fingerprints: the hashed fragments of a text, each with where it came from.

A text is first reduced to *tokens* (:mod:`.code`, :mod:`.prose`), each carrying the line
of the cell it came from. Every run of ``k`` consecutive tokens (a *k-gram*) is hashed;
*winnowing* (Schleimer, Wilkerson and Aiken, "Winnowing: local algorithms for document
fingerprinting", SIGMOD 2003, the method of MOSS) keeps the smallest hash of every window of
``window`` consecutive k-grams, so that any run of at least ``k + window - 1`` tokens two
texts share gives both at least one common fingerprint, while a text keeps only about
``2 / (window + 1)`` of its k-grams. Hashes are BLAKE2b, the same in every process.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field


@dataclass(frozen=True)
class Token:
    """One token of a cell: its normalised text and the cell's line it came from (1-based)."""

    text: str
    line: int


@dataclass(frozen=True)
class Place:
    """Where a fingerprint was found: a cell (its nbgrader grade_id) and a range of lines."""

    cell: str
    first: int
    last: int


@dataclass
class Fingerprints:
    """The fingerprints of one submission's code or prose: hash -> the first place it occurs."""

    places: dict[int, Place] = field(default_factory=dict)

    def add(self, digest: int, place: Place) -> None:
        self.places.setdefault(digest, place)

    def remove(self, digests: Iterable[int]) -> None:
        for digest in digests:
            self.places.pop(digest, None)

    def __len__(self) -> int:
        return len(self.places)


def digest(parts: Sequence[str]) -> int:
    """A 64-bit hash of a sequence of token texts, stable across processes."""
    joined = "\x1f".join(parts).encode("utf-8", "surrogatepass")
    return int.from_bytes(hashlib.blake2b(joined, digest_size=8).digest(), "big")


def kgrams(tokens: Sequence[Token], k: int) -> list[tuple[int, int, int]]:
    """(hash, first line, last line) of every k-gram of ``tokens``; a run shorter than ``k``
    but not empty is one k-gram of its own (a one-line function is still a fragment)."""
    if not tokens:
        return []
    if len(tokens) < k:
        return [(digest([t.text for t in tokens]), tokens[0].line, tokens[-1].line)]
    texts = [t.text for t in tokens]
    return [(digest(texts[i:i + k]), tokens[i].line, tokens[i + k - 1].line)
            for i in range(len(tokens) - k + 1)]


def winnow(grams: Sequence[tuple[int, int, int]], window: int) -> list[tuple[int, int, int]]:
    """The k-grams winnowing keeps: the smallest hash of each window of ``window`` k-grams
    (the rightmost on a tie), each kept once however many windows choose it."""
    if len(grams) <= window:
        return [min(grams, key=lambda g: g[0])] if grams else []
    kept: list[tuple[int, int, int]] = []
    last = -1
    for start in range(len(grams) - window + 1):
        best = start
        for i in range(start + 1, start + window):
            if grams[i][0] <= grams[best][0]:
                best = i
        if best != last:
            kept.append(grams[best])
            last = best
    return kept


def all_hashes(token_runs: Iterable[Sequence[Token]], k: int) -> set[int]:
    """Every k-gram hash of some runs of tokens (what a starter cell contains, whole)."""
    return {gram[0] for run in token_runs for gram in kgrams(run, k)}
