"""The course's late policy applied to each graded submission, from what the LMS said.

One place joins the deadlines (:mod:`autograder.lms.deadlines`), the roster's record of a
submission (Canvas's late flag, Moodle's submission time) and nbgrader's
``timestamp.txt`` of a submission handed in another way; export, feedback and the report
all ask :func:`lateness_of`.
"""

from __future__ import annotations

from datetime import datetime

from ..course import Course
from ..lms.deadlines import Deadlines, Lateness
from ..lms.handed_in import NBGRADER_TIMESTAMP
from ..lms.roster import Roster


def _timestamp(course: Course, student: str, assignment: str) -> str:
    stamp = course.submitted / student / assignment / NBGRADER_TIMESTAMP
    if not stamp.is_file():
        return ""
    try:
        return datetime.fromisoformat(stamp.read_text().strip().replace(" ", "T", 1)).isoformat()
    except ValueError:
        return ""


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
