"""What the platform was sent, and what it still must be: ``lti-ledger.json`` in the course.

``{"line_items": {assignment: id URL},
   "scores": {student: {assignment: {"user_id", "score", "delivered", "tries", "error",
                                      "next_try"}}}}``

``score`` is the last score object made for that student's line item, ``delivered``
whether the platform took it. A score the platform did not take stays, with the error and
the time of the next try (later after each failure, at most an hour), until it is taken or
replaced by a newer one: a grade is never dropped. Timestamps only grow, per student and
line item, as AGS requires (a platform ignores a score older than the one it has).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

from ...course import Course
from ...course.records import locked, read_record, write_record

LEDGER_FILE = "lti-ledger.json"
FIRST_WAIT = timedelta(seconds=30)
LONGEST_WAIT = timedelta(hours=1)


def stamp(moment: datetime) -> str:
    """AGS's timestamp: ISO 8601, UTC, to the microsecond."""
    return moment.astimezone(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def _moment(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


@dataclass
class Ledger:
    path: Path
    line_items: dict[str, str] = field(default_factory=dict)
    scores: dict[str, dict[str, dict]] = field(default_factory=dict)

    @classmethod
    def of(cls, course: Course) -> Ledger:
        """The ledger as it stands, to read (to change it: :meth:`updating`)."""
        path = course.root / LEDGER_FILE
        record = read_record(path)
        return cls(path, record.get("line_items", {}), record.get("scores", {}))

    @classmethod
    @contextmanager
    def updating(cls, course: Course) -> Iterator[Ledger]:
        """The ledger, held under its lock for as long as the caller sends scores (the
        grading service and ``export --lti-sync`` may sync at once: one waits for the other,
        so no score is sent twice and no timestamp goes back); saved when left."""
        with locked(course.root / LEDGER_FILE):
            ledger = cls.of(course)
            yield ledger
            ledger.save()

    def save(self) -> None:
        """Write the ledger (under its lock: inside :meth:`updating`)."""
        write_record(self.path, {"line_items": self.line_items, "scores": self.scores})

    def entry(self, student: str, assignment: str) -> dict | None:
        return self.scores.get(student, {}).get(assignment)

    def next_timestamp(self, student: str, assignment: str, now: datetime) -> str:
        """A timestamp later than any sent for this student's line item."""
        entry = self.entry(student, assignment)
        if entry is not None:
            last = _moment(entry["score"]["timestamp"])
            if now <= last:
                now = last + timedelta(microseconds=1)
        return stamp(now)

    def due(self, student: str, assignment: str, now: datetime) -> bool:
        """Whether an undelivered score may be tried again now."""
        entry = self.entry(student, assignment)
        return entry is None or not entry.get("next_try") or _moment(entry["next_try"]) <= now

    def sent(self, student: str, assignment: str, user_id: str, score: dict) -> None:
        self.scores.setdefault(student, {})[assignment] = {
            "user_id": user_id, "score": score, "delivered": True, "tries": 0, "error": "",
            "next_try": ""}

    def failed(self, student: str, assignment: str, user_id: str, score: dict, error: str,
               now: datetime) -> None:
        entry = self.entry(student, assignment)
        tries = (entry or {}).get("tries", 0) + 1 if entry and not entry["delivered"] else 1
        wait = min(FIRST_WAIT * 2 ** (tries - 1), LONGEST_WAIT)
        self.scores.setdefault(student, {})[assignment] = {
            "user_id": user_id, "score": score, "delivered": False, "tries": tries,
            "error": error[:500], "next_try": stamp(now + wait)}

    def undelivered(self) -> list[tuple[str, str, dict]]:
        return [(student, assignment, entry) for student, by in sorted(self.scores.items())
                for assignment, entry in sorted(by.items()) if not entry["delivered"]]
