"""The course's late policy applied to each graded submission, from what the LMS said.

One place joins the deadlines (:mod:`autograder.lms.deadlines`), the roster's record of a
submission (Canvas's late flag, Moodle's submission time) and nbgrader's
``timestamp.txt`` of a submission handed in another way; export, feedback and the report
all ask :func:`lateness_of`.
"""

from __future__ import annotations

from datetime import UTC
from pathlib import Path

from nbgrader.utils import parse_utc

from ..course import Course
from ..lms.deadlines import Deadlines, Lateness
from ..lms.handed_in import NBGRADER_TIMESTAMP
from ..lms.roster import Roster


def nbgrader_timestamp(stamp: Path) -> str:
    """nbgrader's ``timestamp.txt`` (``2026-10-05 15:10:00.123456 UTC``, or any time its
    ``parse_utc`` reads) as ISO 8601 in UTC; "" if there is none. Raises ValueError on a
    file that holds no time."""
    if not stamp.is_file():
        return ""
    text = stamp.read_text(errors="replace").strip()
    try:
        return parse_utc(text).replace(tzinfo=UTC).isoformat()
    except (ValueError, OverflowError, TypeError) as error:
        raise ValueError(f"{stamp}: not a time nbgrader writes ({text[:40]!r})") from error


def _timestamp(course: Course, student: str, assignment: str) -> str:
    try:
        return nbgrader_timestamp(course.submitted / student / assignment / NBGRADER_TIMESTAMP)
    except ValueError:
        return ""      # collect refused such a file; one written by hand counts as none


def lateness_of(course: Course, deadlines: Deadlines, roster: Roster, student: str,
                assignment: str) -> Lateness:
    """The policy's verdict on ``student``'s submission of ``assignment``."""
    record = roster.submission(student, assignment) or {}
    submitted_at = record.get("submitted_at") or _timestamp(course, student, assignment)
    return deadlines.lateness(assignment, student, submitted_at, bool(record.get("late")))


def describe(lateness: Lateness, raw: float, max_score: float) -> str:
    """One line for a person: the raw score, and what the policy made of it."""
    if lateness.excused:
        return "Excused."
    text = f"{raw:g} / {max_score:g}"
    if lateness.days:
        text += (f"; late by {lateness.days} day{'s' * (lateness.days != 1)} "
                 f"({lateness.basis}): {lateness.credit:.0%} credit, "
                 f"{lateness.final(raw):.4g} / {max_score:g}")
    return text
