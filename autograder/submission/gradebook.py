"""Queries of nbgrader's gradebook that the grader shares: which cells carry points, and
a submission's grades in one query."""

from __future__ import annotations

from typing import NamedTuple

from nbgrader.api import (
    Assignment,
    BaseCell,
    Comment,
    Grade,
    Gradebook,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
)

from ..course import Outcome
from ..course.outcome import AWAITING, BY_HAND, BY_TESTS, HAND_GRADED


class ExpectedCell(NamedTuple):
    """A cell of an assignment that carries points."""

    grade_id: str
    max_score: float
    kind: str            # TEST (autograded), ANSWER (graded by hand) or TASK (by hand)

    @property
    def graded_by(self) -> str:
        return BY_TESTS if self.kind == TEST else BY_HAND


TEST, ANSWER, TASK = "test", "answer", "task"


def expected_cells(db_url: str, assignment: str) -> dict[str, list[ExpectedCell]]:
    """{notebook: [cell, ...]} of every cell of an assignment that carries points, from the
    gradebook: nbgrader's autograded tests, answers graded by hand (a grade cell that is
    also a solution cell) and tasks."""
    with Gradebook(db_url) as gb:
        cells = {}
        for nb in gb.find_assignment(assignment).notebooks:
            answers = {cell.name for cell in nb.solution_cells}
            cells[nb.name] = [
                *[ExpectedCell(cell.name, cell.max_score,
                               ANSWER if cell.name in answers else TEST)
                  for cell in nb.grade_cells],
                *[ExpectedCell(cell.name, cell.max_score, TASK) for cell in nb.task_cells]]
        return cells


def grades_of(gb: Gradebook, assignment: str, student: str) -> dict[tuple[str, str], Grade]:
    """{(notebook, cell): grade} of a submission, in one query (nbgrader's find_grade makes
    one, or two, per cell)."""
    return _of_submission(gb, Grade, assignment, student)


def comments_of(gb: Gradebook, assignment: str, student: str
                ) -> dict[tuple[str, str], Comment]:
    """{(notebook, cell): comment} of a submission's answer and task cells, in one query."""
    return _of_submission(gb, Comment, assignment, student)


def _of_submission(gb: Gradebook, model: type[Grade] | type[Comment], assignment: str,
                   student: str) -> dict:
    rows = gb.db.query(model, Notebook.name, BaseCell.name) \
        .join(BaseCell, BaseCell.id == model.cell_id) \
        .join(SubmittedNotebook, SubmittedNotebook.id == model.notebook_id) \
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id) \
        .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id) \
        .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id) \
        .filter(Assignment.name == assignment, SubmittedAssignment.student_id == student) \
        .all()
    return {(notebook, cell): entry for entry, notebook, cell in rows}


def with_hand_grades(gb: Gradebook, outcome: Outcome) -> Outcome:
    """A copy of ``outcome`` as the gradebook ``gb`` has it now, so that its scores are the
    export's: a cell a person graded (an answer, a task, or a test whose score a grader
    overrode in the formgrader) with that grade and the comment, an answer awaiting its
    grade as such, and every cell's score nbgrader's (extra credit included)."""
    grades = grades_of(gb, outcome.assignment, outcome.student)
    comments = comments_of(gb, outcome.assignment, outcome.student)
    outcome = Outcome.from_json(outcome.to_json())
    for cell in outcome.cells:
        grade = grades.get((cell.notebook, cell.grade_id))
        comment = comments.get((cell.notebook, cell.grade_id))
        if grade is None:
            continue
        if comment is not None and comment.manual_comment:
            cell.comment = comment.manual_comment
        if grade.manual_score is not None:
            cell.status, cell.message = HAND_GRADED, ""
            cell.needs_manual_grade = False
        elif cell.graded_by == BY_HAND and grade.needs_manual_grade:
            cell.status, cell.message = AWAITING, "to be graded by hand"
            cell.needs_manual_grade = True
        cell.score = float(grade.score or 0.0)      # nbgrader's: extra credit included
    return outcome
