"""The one writer: the only code that writes the course's gradebook and ``autograded/``.

Grading processes never touch either; each returns an :class:`~autograder.course.Outcome`
and leaves its graded notebooks in its workspace. :func:`record` stores them — the
gradebook, then the graded notebooks, then the outcome file, last and atomically, which
marks the submission done — so grading can be stopped at any moment and started again.
:func:`snapshot_gradebook` gives grading processes a consistent copy to read.
"""

from __future__ import annotations

import contextlib
import shutil
import sqlite3
import warnings
from pathlib import Path

from nbgrader.api import (
    Base,
    Gradebook,
    MissingEntry,
)
from sqlalchemy.exc import SAWarning

from ..course import Course, Outcome
from ..course.outcome import BY_TESTS, load_outcome, outcome_path
from ..submission.gradebook import comments_of, grades_of


def snapshot_gradebook(course: Course, target: Path) -> Path:
    """A consistent SQLite copy of the gradebook for workers to read.

    An SQLite gradebook is copied with SQLite's backup API; any other database (PostgreSQL
    for a team of graders) table by table into a new SQLite file of nbgrader's schema.
    """
    if course.db_url.startswith("sqlite:///"):
        with sqlite3.connect(course.db_url.removeprefix("sqlite:///")) as source, \
                sqlite3.connect(target) as copy:
            source.backup(copy)
        return target
    with Gradebook(course.db_url) as source, Gradebook(f"sqlite:///{target}") as copy:
        with source.engine.connect() as reading, copy.engine.begin() as writing:
            for table in reversed(Base.metadata.sorted_tables):   # what nbgrader put there
                writing.execute(table.delete())
            for table in Base.metadata.sorted_tables:
                rows = [dict(row._mapping) for row in reading.execute(table.select())]
                if rows:
                    writing.execute(table.insert(), rows)
    return target


def record(course: Course, outcome: Outcome, graded: Path | None = None,
           gradebook: Gradebook | None = None) -> None:
    """Record one outcome: the gradebook, the graded notebooks (from ``graded``), and the
    outcome's report, written last and atomically: it marks the submission done.

    ``gradebook``, if given, is the course's gradebook, open (a batch keeps one open: a
    fresh connection compiles every query again); otherwise one is opened for this.
    """
    with contextlib.ExitStack() as stack:
        gb = gradebook or stack.enter_context(Gradebook(course.db_url))
        try:
            _record_grades(gb, outcome, load_outcome(course, outcome.student, outcome.assignment))
        except BaseException:
            gb.db.rollback()     # none of it is committed with the next outcome
            raise
    target = course.autograded / outcome.student / outcome.assignment
    if target.exists():
        shutil.rmtree(target)
    if graded is not None and graded.is_dir():
        shutil.copytree(graded, target, symlinks=True)
    report = outcome_path(course, outcome.student, outcome.assignment)
    partial = report.with_suffix(".partial")
    outcome.save(partial)
    partial.replace(report)


def _record_grades(gb: Gradebook, outcome: Outcome, previous: Outcome | None) -> None:
    with warnings.catch_warnings():
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; they are harmless.
        warnings.simplefilter("ignore", SAWarning)
        gb.update_or_create_student(outcome.student)
        gb.update_or_create_submission(outcome.assignment, outcome.student)
        grades = grades_of(gb, outcome.assignment, outcome.student)
        comments = comments_of(gb, outcome.assignment, outcome.student)
        answered = {(c.notebook, c.grade_id): c.answer_digest
                    for c in (previous.cells if previous is not None else [])}
        for cell in outcome.cells:
            key = (cell.notebook, cell.grade_id)
            grade = grades.get(key)
            if grade is None:
                raise MissingEntry(f"No such grade: {outcome.assignment}/{cell.notebook}/"
                                   f"{cell.grade_id} for {outcome.student}")
            if (grade.manual_score is not None or grade.extra_credit) \
                    and cell.answer_digest and answered.get(key) == cell.answer_digest:
                continue       # a person graded it, and what they graded is the same
            grade.auto_score = cell.score if cell.graded_by == BY_TESTS or \
                not cell.needs_manual_grade else None
            grade.manual_score = grade.extra_credit = None
            grade.needs_manual_grade = cell.needs_manual_grade
            if key in comments:
                comments[key].manual_comment = None
        gb.db.commit()


