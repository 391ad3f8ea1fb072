"""Name a failing submission's most likely mistake from the mutant catalogue.

Every catalogued mutant is a plausible mistake with a known *pattern*: the test cells it
fails and how each fails (wrong values, NaN, a modified input, a missing gradient, an
exception, a timeout …). The patterns come from a dry run of the catalogue
(:mod:`.dryrun`), cached per version of the assignment. A graded submission's
own pattern is read from its outcome; :func:`diagnose` explains it with the catalogued
mistakes that fit it best — one, or a few when the submission made several.

A mutant's docstring gives the diagnosis: its first line names the mistake (for the
instructor), and a paragraph starting ``Hint:`` says what to check (for the student);
without one, the student is shown the mistake itself.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import asdict, dataclass, field

from ..course import Course, Outcome
from ..course.files import digest
from ..course.outcome import BY_HAND, NOT_RUN, PASSED, TIMED_OUT
from .catalogue import CATALOGUE, Implementation, implementations
from .dryrun import failing_cases

CACHE_FOLDER = ".autograder-cache"
PATTERN_FORMAT = "4"         # bump when the cached patterns change shape
MINIMUM_PRECISION = 0.6     # share of a mistake's failing cells the submission must fail


def cell_kind(status: str) -> str:
    """How a failing cell with no failing case listed failed: its status."""
    return {TIMED_OUT: "timeout", NOT_RUN: "not run"}.get(status, "failed")


def case_kind(detail: list) -> str:
    """The kind of one failing case, ``[label, message, kind]`` (see
    :class:`autograder.hidden.judging.Failure`); outcomes recorded before kinds were
    recorded give "other"."""
    return str(detail[2]) if len(detail) > 2 else "other"


Pattern = dict[str, dict[str, str]]     # grade_id -> {case label: failure kind}


@dataclass(frozen=True)
class Mistake:
    """A catalogued mistake and the pattern of failures it produces."""

    name: str
    description: str
    hint: str
    failing: Pattern = field(default_factory=dict)

    @classmethod
    def of(cls, impl: Implementation, cases: dict[str, list]) -> Mistake:
        failing = {grade_id: {str(detail[0]): case_kind(detail) for detail in found}
                   for grade_id, found in cases.items() if found}
        return cls(impl.name, impl.description, hint_of(impl), failing)


def hint_of(impl: Implementation) -> str:
    """The ``Hint:`` paragraph of a mutant's docstring, or its first line."""
    import ast

    doc = ast.get_docstring(ast.parse(impl.code)) or ""
    for paragraph in doc.split("\n\n"):
        if paragraph.strip().startswith("Hint:"):
            return " ".join(paragraph.strip().removeprefix("Hint:").split())
    return impl.description


@dataclass
class Diagnosis:
    """The mistakes that best explain a submission's failures, best first."""

    mistakes: list[Mistake]
    explained: list[str]            # failing cells the mistakes account for
    unexplained: list[str]          # failing cells none of them accounts for

    @property
    def primary(self) -> Mistake | None:
        return self.mistakes[0] if self.mistakes else None


def submission_pattern(outcome: Outcome) -> Pattern:
    """The failing cells of a submission, each with its failing cases and their kinds."""
    pattern: Pattern = {}
    for cell in outcome.cells:
        if cell.graded_by == BY_HAND or (cell.status == PASSED and cell.score >= cell.max_score):
            continue           # a person grades that cell: no catalogued mistake explains it
        cases = {str(detail[0]): case_kind(detail) for detail in cell.details}
        pattern[cell.grade_id] = cases or {"*": cell_kind(cell.status)}
    return pattern


def _same_failure(mine: dict[str, str], theirs: dict[str, str]) -> float:
    """How alike two failures of one cell are: shared failing cases, failing the same way."""
    labels = set(mine) | set(theirs)
    if not labels:
        return 0.0
    common = set(mine) & set(theirs)
    kinds = sum(mine[label] == theirs[label] for label in common) / len(common) if common \
        else 0.0
    return (len(common) / len(labels)) * (0.7 + 0.3 * kinds) if common else 0.1


def _fit(mistake: Mistake, failing: Pattern, uncovered: set[str]) -> float:
    """How well ``mistake`` explains the still ``uncovered`` failing cells (0: not at all).

    The mistake must fail mostly cells the submission fails too (precision); what it
    explains is, over the uncovered cells it shares, how alike the failures are.
    """
    if not mistake.failing:
        return 0.0
    shared = set(mistake.failing) & set(failing)
    precision = len(shared) / len(mistake.failing)
    if precision < MINIMUM_PRECISION:
        return 0.0
    return precision * sum(_same_failure(failing[cell], mistake.failing[cell])
                           for cell in shared & uncovered)


def diagnose(outcome: Outcome, mistakes: Iterable[Mistake], most: int = 3) -> Diagnosis:
    """Explain ``outcome``'s failures with at most ``most`` catalogued mistakes.

    Greedy: take the mistake that best explains the still-unexplained failing cells (while
    failing few cells the submission passed), then the next, while one helps.
    """
    failing = submission_pattern(outcome)
    uncovered = set(failing)
    chosen: list[Mistake] = []
    candidates = sorted(mistakes, key=lambda m: m.name)
    while uncovered and len(chosen) < most:
        scored = [(_fit(m, failing, uncovered), m) for m in candidates if m not in chosen]
        best_score, best = max(scored, key=lambda pair: pair[0], default=(0.0, None))
        if best is None or best_score < 0.2:
            break
        chosen.append(best)
        uncovered -= set(best.failing)
    explained = sorted(set(failing) - uncovered)
    return Diagnosis(chosen, explained, sorted(uncovered))


# --------------------------------------------------------------------------- patterns


def _fingerprint(course: Course, assignment: str) -> str:
    """A hash of everything a pattern depends on: sources, suite, helpers, catalogue."""
    return digest([course.source / assignment, CATALOGUE / assignment], PATTERN_FORMAT,
                  pattern="*.py")[:16]


def catalogue_mistakes(course: Course, assignment: str, refresh: bool = False) -> list[Mistake]:
    """Every catalogued mutant of ``assignment`` with its pattern (a cached dry run)."""
    version = _fingerprint(course, assignment)
    cache = course.root / CACHE_FOLDER / f"mistakes-{assignment}-{version}.json"
    if cache.exists() and not refresh:
        return [Mistake(**entry) for entry in json.loads(cache.read_text())]
    mistakes = [Mistake.of(impl, failing_cases(course.source / assignment, impl.code))
                for impl in implementations(assignment, "mutant")]
    cache.parent.mkdir(parents=True, exist_ok=True)
    cache.write_text(json.dumps([asdict(m) for m in mistakes], indent=1))
    return mistakes
