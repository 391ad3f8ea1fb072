"""What grading one submission produced: scores per test cell, each with a status and a reason.

The worker that grades a submission writes an :class:`Outcome` as JSON; the single writer
that records grades reads it back. The same record feeds the student's feedback page.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field
from pathlib import Path

PASSED, FAILED, TIMED_OUT, NOT_RUN = "passed", "failed", "timed out", "could not run"


@dataclass
class CellResult:
    """The verdict on one graded (test) cell."""

    grade_id: str
    notebook: str
    score: float
    max_score: float
    status: str
    message: str = ""
    details: list = field(default_factory=list)   # [case label, what is wrong] per failure


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
    # graded again before anything is recorded (see autograder.grading).
    abnormal: list[str] = field(default_factory=list)
    # When it was graded twice: each attempt's score and what went wrong in it.
    attempts: list[dict] = field(default_factory=list)

    @property
    def score(self) -> float:
        return sum(c.score for c in self.cells)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.cells)

    def to_json(self) -> str:
        return json.dumps(asdict(self), indent=2)

    @classmethod
    def from_json(cls, text: str) -> Outcome:
        data = json.loads(text)
        data["cells"] = [CellResult(**c) for c in data["cells"]]
        return cls(**data)

    def save(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(self.to_json())

    @classmethod
    def load(cls, path: Path) -> Outcome:
        return cls.from_json(path.read_text())
