"""`export`: grades from the gradebook as CSV and as the contract's JSON.

JSON (``../shared/spec/assignments.md``)::

    {"students": {"<student_id>": {"<assignment>": {"score": 7.0, "max_score": 10.0,
      "cells": {"<grade_id>": {"score": 1.0, "max_score": 1.0}}}}}}

A cell that awaits a person's grade also has ``"needs_manual_grade": true``.

CSV: one row per student and assignment — ``student_id, assignment, score, max_score`` — then
one column per graded cell, named ``<assignment>:<grade_id>`` (empty on other assignments'
rows). Every student in the gradebook appears for every assignment; a missing submission
scores 0. Text a spreadsheet would take for a formula (a student id beginning with ``=``)
is written as text (:mod:`autograder.course.spreadsheet`).
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from nbgrader.api import Gradebook

from ..course import Course
from ..course.spreadsheet import to_cell
from ..submission.gradebook import expected_cells, grades_of


def gradebook_scores(course: Course) -> dict:
    """The contract's JSON structure, read from the gradebook: every cell that carries
    points (autograded tests, answers graded by hand, tasks), its score so far, and
    ``needs_manual_grade`` on a cell that awaits a person's grade."""
    students: dict = {}
    with Gradebook(course.db_url) as gb:
        assignments = sorted(gb.assignments, key=lambda a: a.name)
        student_ids = sorted(s.id for s in gb.students)
    cells_of = {a.name: expected_cells(course.db_url, a.name) for a in assignments}
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
                entry[assignment.name] = {
                    "score": float(sum(c["score"] for c in cells.values())),
                    "max_score": float(assignment.max_score),
                    "cells": cells,
                }
    return {"students": students}


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
                                      *cell_columns]))
        for student, assignment, result in rows:
            cells = {f"{assignment}:{g}": c["score"] for g, c in result["cells"].items()}
            writer.writerow(map(to_cell, [student, assignment, result["score"],
                                          result["max_score"],
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
