"""`export`: grades from the gradebook as CSV and as the contract's JSON.

JSON (``../shared/spec/assignments.md``)::

    {"students": {"<student_id>": {"<assignment>": {"score": 7.0, "max_score": 10.0,
      "cells": {"<grade_id>": {"score": 1.0, "max_score": 1.0}}}}}}

A cell that awaits a person's grade also has ``"needs_manual_grade": true``. Where the course
has a late policy (``deadlines.toml``, :mod:`autograder.lms.deadlines`), each graded
submission also has ``"late": {"days", "credit", "final_score", "basis"}`` (or
``"excused": true``); ``score`` stays the raw score.

CSV: one row per student and assignment — ``student_id, assignment, score, max_score,
final_score, days_late, credit, excused`` (``final_score``: the score after the late
policy; without one, the score) — then one column per graded cell, named
``<assignment>:<grade_id>`` (empty on other assignments' rows). Every student in the
gradebook appears for every assignment; a missing submission scores 0. Text a spreadsheet
would take for a formula (a student id beginning with ``=``) is written as text
(:mod:`autograder.course.spreadsheet`).

Grades also go back to the LMS in its own files, built from what it exported
(:mod:`autograder.lms`), with the late policy applied and students matched by the LMS's own
ids from the roster ``collect`` keeps: Canvas's gradebook (:func:`export_canvas`), Moodle's
grading worksheet (:func:`export_moodle_worksheet`) and Moodle's gradebook import
(:func:`export_moodle_gradebook`). A student the LMS file lists but the course has no
grade for gets an empty cell, never a zero; a student the course graded whom the file does
not list is named in the result.
"""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass, field
from pathlib import Path

from nbgrader.api import Gradebook

from ..course import Course
from ..course.outcome import OUTCOME_FILE
from ..course.spreadsheet import to_cell
from ..lms import canvas, deadlines, moodle
from ..lms.roster import Roster, canvas_key, email_key
from ..lms.table import read_table
from ..submission.gradebook import expected_cells, grades_of
from .lateness import describe, lateness_of

LATE_COLUMNS = ["final_score", "days_late", "credit", "excused"]


def gradebook_scores(course: Course) -> dict:
    """The contract's JSON structure, read from the gradebook: every cell that carries
    points (autograded tests, answers graded by hand, tasks), its score so far, and
    ``needs_manual_grade`` on a cell that awaits a person's grade; with a late policy,
    ``late`` or ``excused`` on each submission."""
    students: dict = {}
    with Gradebook(course.db_url) as gb:
        assignments = sorted(gb.assignments, key=lambda a: a.name)
        student_ids = sorted(s.id for s in gb.students)
    cells_of = {a.name: expected_cells(course.db_url, a.name) for a in assignments}
    policy, roster = deadlines.load(course), Roster.of(course)
    with Gradebook(course.db_url) as gb:
        for student in student_ids:
            entry = students.setdefault(student, {})
            for assignment in assignments:
                grades = grades_of(gb, assignment.name, student)
                expected = cells_of[assignment.name]
                names = [cell.grade_id for cells in expected.values() for cell in cells]
                cells = {}
                for notebook, notebook_cells in expected.items():
                    for cell in notebook_cells:
                        grade = grades.get((notebook, cell.grade_id))
                        key = cell.grade_id if names.count(cell.grade_id) == 1 \
                            else f"{notebook}:{cell.grade_id}"   # two notebooks, one id
                        cells[key] = {"score": float(grade.score or 0.0) if grade else 0.0,
                                      "max_score": float(cell.max_score)}
                        if grade is not None and grade.needs_manual_grade:
                            cells[key]["needs_manual_grade"] = True
                result = entry[assignment.name] = {
                    "score": float(sum(c["score"] for c in cells.values())),
                    "max_score": float(assignment.max_score),
                    "cells": cells,
                }
                if policy.configured and graded(course, student, assignment.name):
                    late = lateness_of(course, policy, roster, student, assignment.name)
                    if late.excused:
                        result["excused"] = True
                    else:
                        result["late"] = {"days": late.days, "credit": late.credit,
                                          "final_score": late.final(result["score"]),
                                          "basis": late.basis}
    return {"students": students}


def graded(course: Course, student: str, assignment: str) -> bool:
    """Whether ``student`` handed in ``assignment`` and it was graded."""
    return (course.autograded / student / assignment / OUTCOME_FILE).is_file()


def final_score(result: dict) -> float | None:
    """The score after the late policy (None: excused)."""
    if result.get("excused"):
        return None
    return result["late"]["final_score"] if "late" in result else result["score"]


def write_json(scores: dict, path: Path) -> None:
    path.write_text(json.dumps(scores, indent=2, sort_keys=True) + "\n")


def write_csv(scores: dict, path: Path) -> None:
    rows = [(student, assignment, result) for student, by_assignment in scores["students"].items()
            for assignment, result in by_assignment.items()]
    cell_columns = sorted({f"{assignment}:{grade_id}" for _, assignment, result in rows
                           for grade_id in result["cells"]})
    with path.open("w", newline="") as handle:
        writer = csv.writer(handle, quoting=csv.QUOTE_MINIMAL)
        writer.writerow(map(to_cell, ["student_id", "assignment", "score", "max_score",
                                      *LATE_COLUMNS, *cell_columns]))
        for student, assignment, result in rows:
            cells = {f"{assignment}:{g}": c["score"] for g, c in result["cells"].items()}
            late = result.get("late", {})
            final = final_score(result)
            writer.writerow(map(to_cell, [student, assignment, result["score"],
                                          result["max_score"],
                                          "" if final is None else final,
                                          late.get("days", 0), late.get("credit", 1.0),
                                          "yes" if result.get("excused") else "",
                                          *[cells.get(column, "") for column in cell_columns]]))


def export(course: Course, csv_path: str | Path | None = None,
           json_path: str | Path | None = None) -> dict:
    """Write the requested exports (default: grades.csv and grades.json in the course root)."""
    scores = gradebook_scores(course)
    if csv_path is None and json_path is None:
        csv_path, json_path = course.root / "grades.csv", course.root / "grades.json"
    if csv_path is not None:
        write_csv(scores, Path(csv_path))
    if json_path is not None:
        write_json(scores, Path(json_path))
    return scores


@dataclass
class LmsExport:
    """What an export to an LMS file wrote."""

    path: Path
    assignment: str
    written: int = 0                                   # students given a grade
    left_empty: int = 0                                # students of the file without one
    not_in_file: list[str] = field(default_factory=list)   # graded, but not in the file
    added_column: str = ""                             # a new assignment column (Canvas)

    def summary(self) -> str:
        text = (f"{self.assignment}: {self.written} grade(s) written to {self.path}, "
                f"{self.left_empty} student(s) of the file without a grade left empty")
        if self.added_column:
            text += f"; new column {self.added_column!r} (Canvas creates the assignment)"
        if self.not_in_file:
            text += ("; graded in the course but not in the file (not sent): "
                     + ", ".join(self.not_in_file))
        return text


def _graded_results(course: Course, assignment: str) -> dict[str, dict]:
    """{student: export entry} of the students who handed ``assignment`` in."""
    scores = gradebook_scores(course)["students"]
    return {student: by_assignment[assignment] for student, by_assignment in scores.items()
            if assignment in by_assignment and graded(course, student, assignment)}


def export_canvas(course: Course, gradebook_export: Path, assignment: str, output: Path,
                  column: str | None = None) -> LmsExport:
    """Fill ``assignment``'s column of the gradebook Canvas exported (``column``: its
    header, if its name is not the assignment's), or add the column, into ``output``."""
    table = read_table(Path(gradebook_export), "Canvas gradebook export")
    roster = Roster.of(course)
    results = _graded_results(course, assignment)
    cells, users_of = {}, {}
    for student, result in results.items():
        keys = roster.students.get(student, {}).get("keys", [])
        users = [k.split(":", 1)[1] for k in keys if k.startswith(canvas_key(""))]
        users_of[student] = users
        final = final_score(result)
        for user in users:
            cells[user] = canvas.EXCUSED if final is None else \
                canvas.score_text(final)
    max_score = max((r["max_score"] for r in results.values()), default=None)
    filled = canvas.fill(table, assignment, cells, max_score, column)
    table.write(Path(output))
    listed = canvas.user_ids(table)
    return LmsExport(Path(output), assignment, len(filled.written), len(filled.not_in_course),
                     sorted(s for s, users in users_of.items() if not set(users) & listed),
                     filled.column if filled.added else "")


def feedback_comment(result: dict, late: deadlines.Lateness | None) -> str:
    """The comment a student reads beside their grade in the LMS."""
    pending = any(c.get("needs_manual_grade") for c in result["cells"].values())
    text = "Autograded: " + describe(late or deadlines.Lateness(), result["score"],
                                     result["max_score"])
    if pending:
        text += ". Written answers await a grade by hand."
    return text + " The feedback file has the details."


def export_moodle_worksheet(course: Course, worksheet_path: Path, assignment: str,
                            output: Path) -> LmsExport:
    """Fill ``Grade`` and ``Feedback comments`` of the grading worksheet Moodle exported
    for ``assignment``, every other cell as Moodle wrote it, into ``output``."""
    worksheet = moodle.read_worksheet(Path(worksheet_path))
    roster, policy = Roster.of(course), deadlines.load(course)
    results = _graded_results(course, assignment)
    grades, matched = {}, set()
    for number, participant in worksheet.participants.items():
        keys = [f"moodle:{assignment}:{number}"]
        if participant.email:
            keys.append(email_key(participant.email))
        student = roster.owner_of_any(keys)
        if student is None or student not in results:
            continue
        matched.add(student)
        late = lateness_of(course, policy, roster, student, assignment)
        result = results[student]
        grades[number] = (final_score(result), feedback_comment(result, late))
    worksheet.fill(grades)
    worksheet.table.write(Path(output))
    return LmsExport(Path(output), assignment, sum(1 for g in grades.values() if g[0] is not None),
                     len(worksheet.participants) - len(grades),
                     sorted(set(results) - matched))


def export_moodle_gradebook(course: Course, assignments: list[str], output: Path
                            ) -> LmsExport:
    """Moodle's gradebook import file: one row per student the roster knows an e-mail
    address of, one column per assignment (the score after the late policy)."""
    roster = Roster.of(course)
    results = {a: _graded_results(course, a) for a in assignments}
    students = sorted({s for by_student in results.values() for s in by_student})
    rows, missing = [], []
    for student in students:
        entry = roster.students.get(student, {})
        if not entry.get("email"):
            missing.append(student)
            continue
        rows.append((entry["email"], entry.get("name", ""),
                     {a: final_score(results[a][student]) if student in results[a] else None
                      for a in assignments}))
    Path(output).write_text(moodle.gradebook_csv(rows, assignments), encoding="utf-8")
    return LmsExport(Path(output), ", ".join(assignments), len(rows), 0, missing)
