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
    Assignment,
    Base,
    BaseCell,
    Grade,
    Gradebook,
    MissingEntry,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
)
from sqlalchemy.exc import SAWarning

from ..course import Course, Outcome
from ..course.outcome import outcome_path


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
            _record_grades(gb, outcome)
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


def _record_grades(gb: Gradebook, outcome: Outcome) -> None:
    with warnings.catch_warnings():
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; they are harmless.
        warnings.simplefilter("ignore", SAWarning)
        gb.update_or_create_student(outcome.student)
        gb.update_or_create_submission(outcome.assignment, outcome.student)
        grades = _grades_of(gb, outcome.assignment, outcome.student)
        for cell in outcome.cells:
            grade = grades.get((cell.notebook, cell.grade_id))
            if grade is None:
                raise MissingEntry(f"No such grade: {outcome.assignment}/{cell.notebook}/"
                                   f"{cell.grade_id} for {outcome.student}")
            grade.auto_score = cell.score
            grade.manual_score = None
        gb.db.commit()


def _grades_of(gb: Gradebook, assignment: str, student: str) -> dict[tuple[str, str], Grade]:
    """{(notebook, cell): grade} of a submission, in one query (nbgrader's find_grade makes
    one, or two, per cell)."""
    rows = gb.db.query(Grade, Notebook.name, BaseCell.name) \
        .join(BaseCell, BaseCell.id == Grade.cell_id) \
        .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id) \
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id) \
        .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id) \
        .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id) \
        .filter(Assignment.name == assignment, SubmittedAssignment.student_id == student) \
        .all()
    return {(notebook, cell): grade for grade, notebook, cell in rows}
