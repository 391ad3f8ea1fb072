"""Every official grading's submission, kept, and which one counts (``counts = "best"``).

On the hub a student may hand in an assignment several times; each submission that is
graded is an official grading (:mod:`.allowance`). nbgrader's gradebook holds one
submission per student and assignment. Where ``deadlines.toml`` says ``counts = "best"``,
the grading service keeps each graded submission, with its score from the tests, in
``attempts/<student>/<assignment>/<exchange folder>/`` (private, like ``submitted/``), and
when the latest scores less than the best kept one, puts the best one back in
``submitted/``, where the next round grades it again: the gradebook, exports and the
report then show the best. Equal scores: the latest counts. Written answers are graded by
a person on the submission that counts.
"""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from ..course import Course
from ..course.files import incoming_beside, swap_in

ATTEMPTS_FOLDER = "attempts"
ATTEMPT_FILE = "attempt.json"


@dataclass(frozen=True)
class Attempt:
    """One official grading's submission, kept."""

    folder: Path         # attempts/<student>/<assignment>/<exchange folder>/
    arrived: str         # ISO 8601 (UTC): when it arrived in the exchange
    score: float         # points from the tests
    max_score: float

    @property
    def files(self) -> Path:
        return self.folder / "submission"


@dataclass(frozen=True)
class Counting:
    """What a student is told of which official grading counts, with a graded submission."""

    score: float             # this submission's points from the tests
    max_score: float
    this_counts: bool
    best_score: float        # the best attempt's
    best_arrived: str        # when it arrived: UTC, to the minute


def counting(this: Attempt, top: Attempt) -> Counting:
    """What to tell of ``this`` attempt when ``top`` is the best."""
    arrived = datetime.fromisoformat(top.arrived).astimezone(UTC).strftime("%Y-%m-%d %H:%M")
    return Counting(_points(this.score), _points(this.max_score), top.folder == this.folder,
                    _points(top.score), arrived)


def _points(value: float) -> float | int:
    return int(value) if float(value).is_integer() else round(value, 2)


def attempts_of(course: Course, student: str, assignment: str) -> list[Attempt]:
    """The kept attempts of ``student``'s ``assignment``, oldest first."""
    root = course.root / ATTEMPTS_FOLDER / student / assignment
    found = []
    for folder in sorted(root.iterdir()) if root.is_dir() else []:
        record = folder / ATTEMPT_FILE
        if record.is_file():
            data = json.loads(record.read_text())
            found.append(Attempt(folder, data["arrived"], float(data["score"]),
                                 float(data["max_score"])))
    return sorted(found, key=lambda a: a.arrived)


def keep(course: Course, student: str, assignment: str, name: str, arrived: str,
         score: float, max_score: float) -> Attempt:
    """Keep the submission now in ``submitted/`` as the attempt that arrived as exchange
    folder ``name`` at ``arrived``, with its score (written whole, or not at all)."""
    folder = course.root / ATTEMPTS_FOLDER / student / assignment / name
    partial = folder.with_name(folder.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    shutil.copytree(course.submitted / student / assignment, partial / "submission")
    (partial / ATTEMPT_FILE).write_text(json.dumps(
        {"arrived": arrived, "score": score, "max_score": max_score}))
    shutil.rmtree(folder, ignore_errors=True)
    os.rename(partial, folder)
    return Attempt(folder, arrived, score, max_score)


def best(attempts: list[Attempt]) -> Attempt | None:
    """The attempt that counts under ``counts = "best"``: the most points, the latest of
    equals."""
    return max(reversed(attempts), key=lambda a: a.score, default=None)


def put_back(course: Course, student: str, assignment: str, attempt: Attempt,
             marker: tuple[str, str]) -> None:
    """Put ``attempt``'s submission back in ``submitted/`` (in one rename), with the
    record ``marker`` (file name, text) saying which arrival was taken last and that this
    attempt counts."""
    target = course.submitted / student / assignment
    incoming = incoming_beside(target)
    shutil.copytree(attempt.files, incoming)
    (incoming / marker[0]).write_text(marker[1])
    swap_in(incoming, target)
