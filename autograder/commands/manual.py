"""`manual`: the answers graded by hand, out to a CSV and back into the gradebook.

``manual ASSIGNMENT --export PATH`` writes one row per submission and cell graded by hand
(an answer nbgrader marks for manual grading, written or code, and a task), with the
columns ``student_id, notebook, grade_id, max_score, score, comment, answer``: ``score`` and
``comment`` as graded so far (empty until then), ``answer`` the student's answer as
submitted. ``manual ASSIGNMENT --import PATH`` reads such a file back: a row with a score
sets that cell's hand grade and comment. The file is checked whole before anything is
written: a score below 0 or above the cell's points, or an unknown student, submission or
cell, refuses the whole file, naming the line, and changes nothing. nbgrader's formgrader
(``make formgrader``) does the same in a browser; both write nbgrader's own fields. A cell
a spreadsheet would take for a formula (an answer or a student id beginning with ``=``) is
written as text and read back as it was (:mod:`autograder.course.spreadsheet`).
"""

from __future__ import annotations

import csv
import math
from dataclasses import dataclass
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from ..course import Course
from ..course.outcome import BY_HAND
from ..course.spreadsheet import from_cell, to_cell
from ..submission.gradebook import comments_of, expected_cells, grades_of

COLUMNS = ["student_id", "notebook", "grade_id", "max_score", "score", "comment", "answer"]


class ManualGradesError(ValueError):
    """A hand-grades file that cannot be imported; nothing was changed."""


@dataclass(frozen=True)
class HandGrade:
    """One row of a hand-grades file that carries a score."""

    line: int
    student: str
    notebook: str
    grade_id: str
    score: float
    comment: str


def _hand_cells(course: Course, assignment: str) -> dict[tuple[str, str], float]:
    """{(notebook, grade_id): max_score} of the cells of ``assignment`` graded by hand."""
    return {(notebook, cell.grade_id): cell.max_score
            for notebook, cells in expected_cells(course.db_url, assignment).items()
            for cell in cells if cell.graded_by == BY_HAND}


def _answers(course: Course, student: str, assignment: str, notebook: str) -> dict[str, str]:
    """{grade_id: source} of the cells of a student's submitted notebook."""
    path = course.submitted / student / assignment / f"{notebook}.ipynb"
    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:      # noqa: BLE001 - missing or unreadable: no answer to show
        return {}
    return {cell.metadata.get("nbgrader", {}).get("grade_id", ""): cell.source
            for cell in cells}


def export_manual(course: Course, assignment: str, path: Path) -> int:
    """Write the hand-graded cells of every submission of ``assignment``; the rows written."""
    hand = _hand_cells(course, assignment)
    rows = []
    with Gradebook(course.db_url) as gb:
        students = sorted(s.student.id for s in gb.find_assignment(assignment).submissions)
        for student in students:
            grades = grades_of(gb, assignment, student)
            comments = comments_of(gb, assignment, student)
            answers: dict[str, dict[str, str]] = {}
            for (notebook, grade_id), max_score in sorted(hand.items()):
                grade = grades.get((notebook, grade_id))
                if grade is None:
                    continue
                if notebook not in answers:
                    answers[notebook] = _answers(course, student, assignment, notebook)
                comment = comments.get((notebook, grade_id))
                rows.append([student, notebook, grade_id, f"{max_score:g}",
                             "" if grade.manual_score is None else f"{grade.manual_score:g}",
                             (comment.manual_comment or "") if comment is not None else "",
                             answers[notebook].get(grade_id, "")])
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(COLUMNS)
        writer.writerows([map(to_cell, row) for row in rows])
    return len(rows)


def read_hand_grades(course: Course, assignment: str, path: Path) -> list[HandGrade]:
    """The rows of ``path`` that carry a score, all checked against the gradebook;
    :class:`ManualGradesError` naming the first bad line, and nothing read, otherwise."""
    try:
        text = path.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as error:
        raise ManualGradesError(f"{path}: cannot be read ({error})") from None
    reader = csv.DictReader(text.splitlines(keepends=True))
    missing = [c for c in COLUMNS[:6] if c not in (reader.fieldnames or [])]
    if missing:
        raise ManualGradesError(f"{path}, line 1: the header lacks {', '.join(missing)} "
                                f"(expected {', '.join(COLUMNS)})")
    hand = _hand_cells(course, assignment)
    with Gradebook(course.db_url) as gb:
        submitted = {s.student.id for s in gb.find_assignment(assignment).submissions}
        known = {s.id for s in gb.students}
    grades = []
    for row in reader:
        line = reader.line_num
        student, notebook, grade_id = (from_cell(row.get(k) or "") for k in COLUMNS[:3])
        where = f"{path}, line {line}"
        if None in row:
            raise ManualGradesError(f"{where}: more fields than the header names")
        if student not in known:
            raise ManualGradesError(f"{where}: unknown student {student!r}")
        if student not in submitted:
            raise ManualGradesError(f"{where}: {student!r} has no submission of {assignment}")
        if (notebook, grade_id) not in hand:
            raise ManualGradesError(f"{where}: {notebook}/{grade_id} is not a cell of "
                                    f"{assignment} graded by hand")
        text_score = (row.get("score") or "").strip()
        if not text_score:
            continue                           # not graded yet: nothing to import
        try:
            score = float(text_score)
        except ValueError:
            raise ManualGradesError(f"{where}: score {text_score!r} is not a number") from None
        max_score = hand[notebook, grade_id]
        if not math.isfinite(score) or not 0 <= score <= max_score:
            raise ManualGradesError(f"{where}: score {text_score} is outside 0..{max_score:g}")
        grades.append(HandGrade(line, student, notebook, grade_id, score,
                                from_cell(row.get("comment") or "")))
    return grades


def import_manual(course: Course, assignment: str, path: Path) -> int:
    """Set the hand grades and comments of ``path`` in the gradebook, all or none; the
    number of grades set."""
    grades = read_hand_grades(course, assignment, path)
    with Gradebook(course.db_url) as gb:
        try:
            for entry in grades:
                grade = grades_of(gb, assignment, entry.student)[entry.notebook, entry.grade_id]
                grade.manual_score = entry.score
                grade.needs_manual_grade = False
                comment = comments_of(gb, assignment, entry.student).get(
                    (entry.notebook, entry.grade_id))
                if comment is not None:
                    comment.manual_comment = entry.comment or None
                elif entry.comment:
                    raise MissingEntry(f"no comment field for {entry.notebook}/{entry.grade_id}")
            gb.db.commit()
        except BaseException:
            gb.db.rollback()
            raise
    return len(grades)
