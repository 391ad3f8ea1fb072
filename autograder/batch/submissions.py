"""The batch: which submissions there are, which are recorded as they are, and in what
order to grade the others."""

from __future__ import annotations

import math
from dataclasses import dataclass

from ..course import Course, Outcome
from ..course.files import digest


@dataclass(frozen=True)
class Submission:
    """``submitted/<student>/<assignment>/`` and a fingerprint of what grading it depends
    on: its files and the assignment's tests."""

    student: str
    assignment: str
    fingerprint: str


def find_submissions(course: Course, assignments: list[str] | None = None) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/`` folder of ``assignments`` (default: all)."""
    wanted = set(assignments or course.assignments())
    found = []
    if course.submitted.is_dir():
        versions = {a: _assignment_version(course, a) for a in wanted}
        for student_dir in sorted(course.submitted.iterdir()):
            for assignment_dir in sorted(student_dir.iterdir()) if student_dir.is_dir() else []:
                if assignment_dir.is_dir() and assignment_dir.name in wanted:
                    fingerprint = digest([assignment_dir], versions[assignment_dir.name])
                    found.append(Submission(student_dir.name, assignment_dir.name, fingerprint))
    return found


def _assignment_version(course: Course, assignment: str) -> str:
    """What an assignment's grading depends on: its source, hidden tests and release."""
    return digest([course.source / assignment, course.release / assignment])


def is_recorded(submission: Submission, outcome: Outcome | None) -> bool:
    """Whether ``outcome``, the one recorded for the submission's student and assignment
    (if any), is of this very submission (same files, same tests)."""
    return outcome is not None and outcome.fingerprint == submission.fingerprint


def longest_first(batch: list[tuple[Submission, Outcome | None]]) -> list[Submission]:
    """The batch (each submission with its last recorded outcome) in the order to grade
    it: first those never graded, then the others by how long they took last time,
    longest first (a slow notebook started last would run alone at the end while the
    other workers wait). Ties keep their order."""
    def last_seconds(entry: tuple[Submission, Outcome | None]) -> float:
        outcome = entry[1]
        return outcome.seconds if outcome is not None and outcome.seconds else math.inf

    return [submission for submission, _ in sorted(batch, key=last_seconds, reverse=True)]
