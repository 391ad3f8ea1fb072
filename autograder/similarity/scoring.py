"""Every pair of submissions compared, what the class has in common discounted, and the
pairs whose similarity stands out of the class's own flagged.

**Rarity.** A fragment (fingerprint) found in ``df`` of the ``N`` submissions compared (this
term's and the past terms' together) weighs

    w = clip( log(C / df) / log(C / 2), 0, 1 ),   C = max(COMMON_SHARE · N, MIN_COMMON)

so a fragment of one or two submissions weighs 1, and one that a twentieth of the class
(:data:`COMMON_SHARE`) or more wrote weighs 0, falling with the logarithm of its frequency
between: what many students write independently — the one obvious ``torch.bmm`` line, the
idiom of the course's examples — is evidence of nothing. In a class of fewer than
``MIN_COMMON / COMMON_SHARE`` (100) submissions, a fragment of :data:`MIN_COMMON` (5) or
more weighs 0.

**Similarity** of two submissions' code, and separately of their prose, is the weighted
Jaccard index of their fingerprints: the weight of the fragments they share over the
weight of all their fragments, 0 to 1 — with :data:`PRIOR` (5) added to the denominator,
as if every pair had five rare fragments more that it does not share, so that two
submissions with almost nothing rare (all they wrote is common in the class) cannot score
high by sharing the little they have. The pair's ``score`` combines both as independent
evidence, ``1 - (1 - code)(1 - prose)``: either alone can make it high, both make it higher.

**Flagging**, calibrated on the class itself. Most pairs of a class are independent, so
the distribution of all pairs' scores describes what independent work looks like in this
assignment this term; a copied pair is an outlier of it. A pair is flagged when its score
is above

    max( FLOOR, median + K · 1.4826 · MAD )

(median and median absolute deviation of every pair's score; 1.4826 · MAD estimates the
standard deviation of the bulk of the scores without being moved by the outliers; :data:`K`
= 6). The floor (:data:`FLOOR` = 0.2: a fifth of two submissions' rare fragments in common)
keeps a class whose scores barely vary from flagging pairs that share almost nothing. In a
class where most pairs share nothing rare at all (median and MAD 0, as in the tests'
corpus and the benchmark's class) the floor is the bar; where independent work is alike
(an assignment with little freedom: most pairs share some rare fragments), the bar rises
with the class. K, FLOOR and COMMON_SHARE were chosen on the corpus of the tests
(``tests/grader/commands/similarity_corpus.py``: the lowest copied pair scores 0.31, the
highest independent pair 0.05), which checks them on a class without copying (nothing
flagged) and on one with copies (every copy flagged, nothing else).
"""

from __future__ import annotations

import math
import statistics
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from .fingerprints import Fingerprints, Place

COMMON_SHARE = 0.05    # a fragment in this share of the class or more weighs nothing
MIN_COMMON = 5         # ... or in this many submissions, in a small class
K = 6.0                # robust standard deviations above the median that flag a pair
FLOOR = 0.2            # never flag a pair scoring less than this
MAD_SCALE = 1.4826     # MAD -> standard deviation, for normally distributed scores
SHOWN_WEIGHT = 0.25    # shared fragments rarer than this are listed (side-by-side view)
PRIOR = 5.0            # rare fragments' weight added to every pair's union (see above)


@dataclass
class Compared:
    """One submission as compared: its label, whether it is this term's, its fingerprints."""

    label: str
    current: bool
    code: Fingerprints
    prose: Fingerprints
    notes: list[str] = field(default_factory=list)


@dataclass
class Pair:
    """Two submissions' similarity."""

    a: str
    b: str
    code: float
    prose: float
    score: float
    flagged: bool = False
    shared: list[dict] = field(default_factory=list)

    def as_json(self) -> dict:
        return {"a": self.a, "b": self.b, "code": round(self.code, 4),
                "prose": round(self.prose, 4), "score": round(self.score, 4),
                "flagged": self.flagged, "shared": self.shared}


@dataclass
class Comparison:
    """Every pair, the bar they were held to, and the clusters the flagged pairs form."""

    pairs: list[Pair]
    threshold: float
    median: float
    mad: float
    clusters: list[list[str]]


def weights(prints: Sequence[Fingerprints]) -> dict[int, float]:
    """{fingerprint: weight} by how many of ``prints`` contain it (see the module)."""
    frequency = Counter(h for one in prints for h in one.places)
    common = max(COMMON_SHARE * len(prints), MIN_COMMON)
    scale = math.log(common / 2)
    return {h: min(1.0, max(0.0, math.log(common / df) / scale))
            for h, df in frequency.items()}


def _similarities(prints: Sequence[Fingerprints], rows: Sequence[int],
                  weight: dict[int, float]) -> np.ndarray:
    """Weighted Jaccard of each of ``rows`` against every submission: (len(rows), N)."""
    totals = np.array([sum(weight[h] for h in one.places) for one in prints], dtype=np.float64)
    frequency = Counter(h for one in prints for h in one.places)
    columns = {h: i for i, h in enumerate(h for h, df in frequency.items()
                                          if df >= 2 and weight[h] > 0)}
    matrix = np.zeros((len(prints), len(columns)), dtype=np.float32)
    for i, one in enumerate(prints):
        for h in one.places:
            j = columns.get(h)
            if j is not None:
                matrix[i, j] = 1.0
    column_weights = np.zeros(len(columns), dtype=np.float32)
    for h, j in columns.items():
        column_weights[j] = weight[h]
    shared = (matrix[list(rows)] * column_weights) @ matrix.T
    union = totals[list(rows)][:, None] + totals[None, :] - shared
    return (shared / (union + PRIOR)).clip(0.0, 1.0)


def threshold(scores: Sequence[float]) -> tuple[float, float, float]:
    """(bar, median, MAD) of the class's pair scores: see the module's docstring."""
    if not scores:
        return FLOOR, 0.0, 0.0
    median = statistics.median(scores)
    mad = statistics.median(abs(s - median) for s in scores)
    return max(FLOOR, median + K * MAD_SCALE * mad), median, mad


def compare(submissions: Sequence[Compared]) -> Comparison:
    """Every pair of this term's submissions, and each of them against every past one,
    sorted by score (highest first), flagged as the module says."""
    current = [i for i, s in enumerate(submissions) if s.current]
    code_prints = [s.code for s in submissions]
    prose_prints = [s.prose for s in submissions]
    code_weight, prose_weight = weights(code_prints), weights(prose_prints)
    code = _similarities(code_prints, current, code_weight) if current else None
    prose = _similarities(prose_prints, current, prose_weight) if current else None
    pairs: list[Pair] = []
    for row, i in enumerate(current):
        for j in range(len(submissions)):
            if j == i or (submissions[j].current and j < i):
                continue
            c, p = float(code[row, j]), float(prose[row, j])
            pairs.append(Pair(submissions[i].label, submissions[j].label, c, p,
                              1.0 - (1.0 - c) * (1.0 - p)))
    bar, median, mad = threshold([pair.score for pair in pairs])
    by_label = {s.label: s for s in submissions}
    for pair in pairs:
        pair.flagged = pair.score > bar
        if pair.score >= bar / 2:
            a, b = by_label[pair.a], by_label[pair.b]
            pair.shared = (shared_fragments(a.code, b.code, code_weight)
                           + shared_fragments(a.prose, b.prose, prose_weight))
    pairs.sort(key=lambda pair: (-pair.score, pair.a, pair.b))
    return Comparison(pairs, bar, median, mad, clusters([p for p in pairs if p.flagged]))


def shared_fragments(a: Fingerprints, b: Fingerprints, weight: dict[int, float]
                     ) -> list[dict]:
    """The fragments two submissions share that are not common in the class (weight at
    least :data:`SHOWN_WEIGHT`), as line ranges of a cell in each, overlapping ranges
    merged: ``{"cell", "a_lines", "b_lines"}`` (and ``"b_cell"`` where b's is another)."""
    found: dict[tuple[str, str], list[tuple[Place, Place]]] = {}
    for h in a.places.keys() & b.places.keys():
        if weight.get(h, 0.0) >= SHOWN_WEIGHT:
            pa, pb = a.places[h], b.places[h]
            found.setdefault((pa.cell, pb.cell), []).append((pa, pb))
    fragments = []
    for (cell_a, cell_b), places in sorted(found.items()):
        places.sort(key=lambda pair: (pair[0].first, pair[0].last))
        merged: list[list[int]] = []
        for pa, pb in places:
            if merged and pa.first <= merged[-1][1] + 1:
                last = merged[-1]
                last[1] = max(last[1], pa.last)
                last[2], last[3] = min(last[2], pb.first), max(last[3], pb.last)
            else:
                merged.append([pa.first, pa.last, pb.first, pb.last])
        for first_a, last_a, first_b, last_b in merged:
            fragment = {"cell": cell_a, "a_lines": [first_a, last_a],
                        "b_lines": [first_b, last_b]}
            if cell_b != cell_a:
                fragment["b_cell"] = cell_b
            fragments.append(fragment)
    return fragments


def clusters(flagged: Sequence[Pair]) -> list[list[str]]:
    """Groups of three or more submissions joined by flagged pairs (one source shared),
    largest first."""
    parent: dict[str, str] = {}

    def root(label: str) -> str:
        while parent.setdefault(label, label) != label:
            parent[label] = parent[parent[label]]
            label = parent[label]
        return label

    for pair in flagged:
        parent[root(pair.a)] = root(pair.b)
    groups: dict[str, list[str]] = {}
    for label in parent:
        groups.setdefault(root(label), []).append(label)
    return sorted((sorted(group) for group in groups.values() if len(group) >= 3),
                  key=lambda group: (-len(group), group))
