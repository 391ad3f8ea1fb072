"""How many official gradings a student has had, and may still ask for, on the hub.

Each submission a student hands in through the exchange asks for an official grading; the
course's ``deadlines.toml`` may limit them per assignment, in any hour and in all
(:mod:`autograder.lms.deadlines`). The ledger, ``gradings.json`` in the course (private,
like the gradebook), records when each official grading's submission arrived:
``{student: {assignment: [ISO 8601, …]}}``.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from datetime import datetime, timedelta
from pathlib import Path

from ..course import Course
from ..lms.deadlines import Deadline

LEDGER_FILE = "gradings.json"
HOUR = timedelta(hours=1)


@dataclass(frozen=True)
class Allowance:
    """Where a student stands against an assignment's limits, at some moment."""

    used_hour: int
    per_hour: int | None
    used_all: int
    in_all: int | None
    next_at: datetime | None     # when a grading is allowed again (None: now, or never)
    exhausted: bool = False      # every grading the assignment allows is used

    @property
    def allowed(self) -> bool:
        return not self.exhausted and self.next_at is None

    @property
    def limited(self) -> bool:
        return self.per_hour is not None or self.in_all is not None


class Ledger:
    """The official gradings recorded so far."""

    def __init__(self, course: Course) -> None:
        self.path: Path = course.root / LEDGER_FILE
        self.times: dict = json.loads(self.path.read_text()) if self.path.exists() else {}

    def gradings(self, student: str, assignment: str) -> list[datetime]:
        return [datetime.fromisoformat(t)
                for t in self.times.get(student, {}).get(assignment, [])]

    def allowance(self, deadline: Deadline, student: str, assignment: str, now: datetime
                  ) -> Allowance:
        """Whether a submission arriving at ``now`` may be graded, and the counts."""
        times = self.gradings(student, assignment)
        recent = sorted(t for t in times if now - HOUR < t <= now)
        exhausted = deadline.gradings_in_all is not None and len(times) >= deadline.gradings_in_all
        next_at = None
        if not exhausted and deadline.gradings_per_hour is not None \
                and len(recent) >= deadline.gradings_per_hour:
            next_at = recent[len(recent) - deadline.gradings_per_hour] + HOUR
        return Allowance(len(recent), deadline.gradings_per_hour, len(times),
                         deadline.gradings_in_all, next_at, exhausted)

    def record(self, student: str, assignment: str, when: datetime) -> None:
        self.times.setdefault(student, {}).setdefault(assignment, []).append(when.isoformat())
        partial = self.path.with_name(self.path.name + ".partial")
        partial.write_text(json.dumps(self.times, indent=1, sort_keys=True))
        os.replace(partial, self.path)
