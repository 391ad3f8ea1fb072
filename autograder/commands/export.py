"""`export`: grades from the gradebook as CSV and as the contract's JSON.

JSON (``../shared/spec/assignments.md``)::

    {"students": {"<student_id>": {"<assignment>": {"score": 7.0, "max_score": 10.0,
      "cells": {"<grade_id>": {"score": 1.0, "max_score": 1.0}}}}}}

CSV: one row per student and assignment — ``student_id, assignment, score, max_score`` — then
one column per graded cell, named ``<assignment>:<grade_id>`` (empty on other assignments'
rows). Every student in the gradebook appears for every assignment; a missing submission
scores 0.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry

from ..course import Course


def gradebook_scores(course: Course) -> dict:
    """The contract's JSON structure, read from the gradebook."""
    students: dict = {}
    with Gradebook(course.db_url) as gb:
        assignments = sorted(gb.assignments, key=lambda a: a.name)
        for student in sorted(gb.students, key=lambda s: s.id):
            entry = students.setdefault(student.id, {})
            for assignment in assignments:
                cells = {}
                try:
                    submission = gb.find_submission(assignment.name, student.id)
                except MissingEntry:
                    submission = None
                for notebook in assignment.notebooks:
                    for cell in notebook.grade_cells:
                        score = 0.0
                        if submission is not None:
                            score = gb.find_grade(cell.name, notebook.name, assignment.name,
                                                  student.id).score or 0.0
                        cells[cell.name] = {"score": float(score),
                                            "max_score": float(cell.max_score)}
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
        writer.writerow(["student_id", "assignment", "score", "max_score", *cell_columns])
        for student, assignment, result in rows:
            cells = {f"{assignment}:{g}": c["score"] for g, c in result["cells"].items()}
            writer.writerow([student, assignment, result["score"], result["max_score"],
                             *[cells.get(column, "") for column in cell_columns]])


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
