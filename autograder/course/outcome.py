"""What grading one submission produced: scores per test cell, each with a status and a reason.

The child process that grades a submission writes an :class:`Outcome` as JSON; the single
writer that records grades (:mod:`autograder.batch.recorder`) reads it back and stores it
as the submission's *outcome file* in ``autograded/<student>/<assignment>/``, which marks it
done. The same record feeds the student's feedback page and the instructor's report.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .paths import Course

PASSED, FAILED, TIMED_OUT, NOT_RUN = "passed", "failed", "timed out", "could not run"
# A cell graded by hand (a written answer, a task): awaiting its grade, or graded.
AWAITING, HAND_GRADED = "awaiting a grade", "graded by hand"
STATUSES = [PASSED, FAILED, TIMED_OUT, NOT_RUN, AWAITING, HAND_GRADED]
# How pages (feedback, the class report) show each status: colour-blind safe, print-legible.
STATUS_COLOURS = {PASSED: "#1a7f37", FAILED: "#b3261e", TIMED_OUT: "#e69f00", NOT_RUN: "#888888",
                  AWAITING: "#0550ae", HAND_GRADED: "#1a7f37"}
# Who grades a cell: the tests (nbgrader's autograded test cells), or a person (answers
# nbgrader marks for manual grading, written or code, and tasks).
BY_TESTS, BY_HAND = "tests", "hand"

OUTCOME_FILE = "autograder-outcome.json"   # in autograded/<student>/<assignment>/
MESSAGE_LIMIT = 500     # characters of a message or reason kept in an outcome


def clip(text: str) -> str:
    """``text`` cut to what an outcome keeps of one message."""
    return text[:MESSAGE_LIMIT]


@dataclass
class CellResult:
    """The verdict on one graded (test) cell."""

    grade_id: str
    notebook: str
    score: float
    max_score: float
    status: str
    message: str = ""
    # Every failing case: [case label, what is wrong, kind of failure] (see
    # autograder.hidden.judging.Failure), for the instructor's report and the diagnosis.
    details: list = field(default_factory=list)
    graded_by: str = BY_TESTS
    # nbgrader's flag: the cell awaits a person's grade (its score so far is `score`).
    needs_manual_grade: bool = False
    # A hash of what a person grades the cell on (an answer: its cell; a task or a test: the
    # whole notebook): grading again keeps a hand grade while that stays the same.
    answer_digest: str = ""
    comment: str = ""         # the grader's comment (a hand grade's), for the feedback


@dataclass
class Outcome:
    """The result of grading one student's submission of one assignment."""

    student: str
    assignment: str
    cells: list[CellResult] = field(default_factory=list)
    reasons: list[str] = field(default_factory=list)
    seconds: float = 0.0
    fingerprint: str = ""     # of the submitted files and the tests it was graded with
    # What went wrong while grading that may not be the submission's doing (a kernel that
    # died or failed to start, a cell past its time limit, ...): such a submission is
    # graded again before anything is recorded (see autograder.batch.supervise).
    abnormal: list[str] = field(default_factory=list)
    # When it was graded twice: each attempt's score and what went wrong in it.
    attempts: list[dict] = field(default_factory=list)
    # The language of the notebook handed in (autograder.course.languages): its feedback
    # page is written in it.
    language: str = "en"

    @property
    def score(self) -> float:
        return sum(c.score for c in self.cells)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.cells)

    @property
    def pending(self) -> list[CellResult]:
        """The cells that await a person's grade."""
        return [c for c in self.cells if c.needs_manual_grade]

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        data = json.loads(text)
        known = set(CellResult.__dataclass_fields__)
        data["cells"] = [CellResult(**{k: v for k, v in c.items() if k in known})
                         for c in data["cells"]]
        return cls(**data)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json())

    @classmethod
    def load(cls, path: Path) -> Outcome:
        return cls.from_json(path.read_text())


def outcome_path(course: Course, student: str, assignment: str) -> Path:
    """Where the recorded outcome of a submission is kept."""
    return course.autograded / student / assignment / OUTCOME_FILE


def load_outcome(course: Course, student: str, assignment: str) -> Outcome | None:
    """The recorded outcome of a graded submission, or None if it was never graded."""
    path = outcome_path(course, student, assignment)
    return Outcome.load(path) if path.exists() else None
