"""Made-up restaurant reviews that judge two aspects: a small sentence-classification task.

Each review says how the food was and how the service was, in two clauses, with filler
before and after::

    honestly the pasta was really awful but the waiter was great .

The label combines the two judgements into four classes (:data:`CLASS_NAMES`). The same
opinion words (``great``, ``awful``, ...) are used for both aspects, so a word alone does
not say which aspect it judges: a model must read it together with the noun before it.
The generator is deterministic: the same ``n`` and ``seed`` always give the same reviews.
"""

from __future__ import annotations

import random
from dataclasses import dataclass

import torch

__all__ = [
    "CLASS_NAMES",
    "FOOD",
    "NEGATIVE",
    "PAD",
    "POSITIVE",
    "SERVICE",
    "VOCAB",
    "Review",
    "encode",
    "make_reviews",
]

PAD = "<pad>"
FOOD = ("food", "pasta", "soup", "pizza", "dessert", "bread")
SERVICE = ("service", "waiter", "staff", "waitress", "host")
POSITIVE = ("good", "great", "excellent", "lovely", "superb")
NEGATIVE = ("bad", "awful", "terrible", "poor", "dreadful")
_INTENSIFIERS = ("really", "very", "quite", "so", "pretty")
_CONNECTORS = ("and", "but", "while", ",")
_FILLERS = (
    ("overall",), ("honestly",), ("to", "be", "fair"), ("we", "went", "there", "on", "friday"),
    ("i", "came", "with", "friends"), ("the", "place", "was", "busy"),
    ("we", "sat", "by", "the", "window"), ("it", "was", "a", "rainy", "evening"),
    ("the", "menu", "was", "long"), ("my", "sister", "ordered", "first"),
)

CLASS_NAMES = ("food + service +", "food + service −", "food − service +",
               "food − service −")
"""Class ``2 * food + service``, where ``food`` and ``service`` are 0 (good) or 1 (bad)."""


def _vocabulary() -> tuple[str, ...]:
    words = {"the", "was", "."}
    for group in (FOOD, SERVICE, POSITIVE, NEGATIVE, _INTENSIFIERS, _CONNECTORS):
        words.update(group)
    for phrase in _FILLERS:
        words.update(phrase)
    return (PAD, *sorted(words))


VOCAB = _vocabulary()
"""Every word a review can contain; index 0 is the padding token :data:`PAD`."""


@dataclass(frozen=True)
class Review:
    """One review.

    Attributes:
        tokens: The words, ending with ``"."``.
        food: 0 if the food was judged good, 1 if bad.
        service: 0 if the service was judged good, 1 if bad.
        opinions: Positions in ``tokens`` of the opinion word on the food and of the
            opinion word on the service, in that order.
        clauses: The food clause and the service clause, in that order, as half-open
            ranges ``(start, stop)`` of positions in ``tokens``.
    """

    tokens: tuple[str, ...]
    food: int
    service: int
    opinions: tuple[int, int]
    clauses: tuple[tuple[int, int], tuple[int, int]]

    @property
    def label(self) -> int:
        """The class, ``2 * food + service``, an index into :data:`CLASS_NAMES`."""
        return 2 * self.food + self.service


def _clause(rng: random.Random, nouns: tuple[str, ...], bad: int) -> list[str]:
    """``the NOUN was [INTENSIFIER] OPINION``; the opinion word is the last one."""
    words = ["the", rng.choice(nouns), "was"]
    if rng.random() < 0.5:
        words.append(rng.choice(_INTENSIFIERS))
    words.append(rng.choice(NEGATIVE if bad else POSITIVE))
    return words


def make_reviews(n: int, seed: int = 0, filler: int = 2) -> list[Review]:
    """Generate ``n`` reviews with a private random generator.

    The two judgements are independent and uniform, so the four classes are equally
    likely; the food clause comes first in about half of the reviews. Up to ``filler``
    neutral phrases ("we sat by the window", ...) are put before, between and after the
    two clauses, so that the opinion words can be far from the end of the review.

    Args:
        n: Number of reviews.
        seed: Seed of the generator; the same arguments give the same reviews.
        filler: The largest number of filler phrases at each of the three places.

    Returns:
        A list of ``n`` :class:`Review`.
    """
    rng = random.Random(seed)

    def fill() -> list[str]:
        return [w for _ in range(rng.randint(0, filler)) for w in rng.choice(_FILLERS)]

    reviews = []
    for _ in range(n):
        food, service = rng.randrange(2), rng.randrange(2)
        clauses = [(_clause(rng, FOOD, food), 0), (_clause(rng, SERVICE, service), 1)]
        if rng.random() < 0.5:
            clauses.reverse()
        (first, aspect_1), (second, _) = clauses
        tokens = fill()
        span_1 = (len(tokens), len(tokens) + len(first))
        tokens += first + [rng.choice(_CONNECTORS)] + fill()
        span_2 = (len(tokens), len(tokens) + len(second))
        tokens += second + fill() + ["."]
        food_span, service_span = (span_1, span_2) if aspect_1 == 0 else (span_2, span_1)
        # the opinion word closes its clause
        opinions = (food_span[1] - 1, service_span[1] - 1)
        reviews.append(
            Review(tuple(tokens), food, service, opinions, (food_span, service_span))
        )
    return reviews


def encode(reviews: list[Review]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Word ids of a batch of reviews, padded on the right.

    Args:
        reviews: ``B`` reviews; ``n`` is the length of the longest.

    Returns:
        ``(ids, mask, labels)``: ``ids`` of shape ``(B, n)`` (int64, indices into
        :data:`VOCAB`, 0 for padding), ``mask`` of shape ``(B, n)`` (bool, ``True`` for a
        real word) and ``labels`` of shape ``(B,)`` (int64).
    """
    index = {word: i for i, word in enumerate(VOCAB)}
    n = max(len(r.tokens) for r in reviews)
    ids = torch.zeros(len(reviews), n, dtype=torch.long)  # (B, n), 0 = PAD
    for row, review in enumerate(reviews):
        ids[row, : len(review.tokens)] = torch.tensor([index[w] for w in review.tokens])
    labels = torch.tensor([r.label for r in reviews])  # (B,)
    return ids, ids != 0, labels
