"""Answers graded by hand, in an ordinary nbgrader assignment written as `.ipynb`: released,
graded (the machine's part), exported and imported as CSV (`manual`), and shown truthfully
in the feedback, the export and the class report; grading again keeps a hand grade unless
the answer changed."""

from __future__ import annotations

import csv
import json

import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.course import Course
from tests.conftest import run_cli, visible_text

pytestmark = pytest.mark.xdist_group("hand-grading")

NAME = "essay"


def _meta(grade_id: str, **flags) -> dict:
    meta = {"grade": False, "solution": False, "locked": False, "schema_version": 3,
            "grade_id": grade_id}
    meta.update(flags)
    return {"nbgrader": meta}


def _source() -> nbformat.NotebookNode:
    return new_notebook(cells=[
        new_markdown_cell("# An essay\nAnswer in words and in code.",
                          metadata=_meta("intro", locked=True)),
        new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                      "    ### END SOLUTION", metadata=_meta("double", solution=True)),
        new_code_cell("assert double(2) == 4", metadata=_meta("test-double", grade=True,
                                                               points=2, locked=True)),
        new_markdown_cell("Attention weights sum to one because the softmax normalises "
                          "them; the model answer and its rubric live here.",
                          metadata=_meta("why", grade=True, solution=True, points=3)),
        new_markdown_cell("Plot the weights of your own example.",
                          metadata=_meta("plot-task", task=True, points=4, locked=True)),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})


@pytest.fixture(scope="module")
def course(tmp_path_factory) -> Course:
    course = Course.at(tmp_path_factory.mktemp("hand") / "course")
    (course.source / NAME).mkdir(parents=True)
    nbformat.write(_source(), course.source / NAME / f"{NAME}.ipynb")
    result = run_cli(course, "release", NAME)
    assert result.returncode == 0, result.stderr[-2000:]
    return course


def _answer(course: Course, student: str, essay: str | None, code: str = "return 2 * x"):
    released = nbformat.read(course.release / NAME / f"{NAME}.ipynb", as_version=4)
    for cell in released.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == "double":
            cell.source = f"def double(x):\n    {code}"
        if grade_id == "why" and essay is not None:
            cell.source = essay
    folder = course.submitted / student / NAME
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(released, folder / f"{NAME}.ipynb")


def _export(course: Course) -> dict:
    result = run_cli(course, "export", "--json", str(course.root / "grades.json"))
    assert result.returncode == 0, result.stderr[-2000:]
    return json.loads((course.root / "grades.json").read_text())["students"]


def _rows(course: Course) -> list[dict]:
    path = course.root / "hand.csv"
    result = run_cli(course, "manual", NAME, "--export", str(path))
    assert result.returncode == 0, result.stderr[-2000:]
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_the_release_keeps_the_model_answer_out(course):
    released = (course.release / NAME / f"{NAME}.ipynb").read_text()
    assert "the model answer and its rubric" not in released
    assert "return 2 * x" not in released


def test_hand_grades_flow_from_csv_to_feedback_export_and_report(course):
    _answer(course, "ada", "The softmax divides by the sum of the exponentials.")
    _answer(course, "bob", None)                           # the essay left as released
    result = run_cli(course, "grade", NAME)
    assert result.returncode == 0, result.stderr[-2000:]

    grades = _export(course)
    ada = grades["ada"][NAME]
    assert ada["max_score"] == 9.0 and ada["score"] == 2.0
    assert ada["cells"]["test-double"] == {"score": 2.0, "max_score": 2.0}
    assert ada["cells"]["why"]["needs_manual_grade"] is True
    assert ada["cells"]["plot-task"]["needs_manual_grade"] is True
    assert "needs_manual_grade" not in grades["bob"][NAME]["cells"]["why"]   # no answer: 0

    rows = _rows(course)
    assert list(rows[0]) == ["student_id", "notebook", "grade_id", "max_score", "score",
                             "comment", "answer"]
    ada_rows = {r["grade_id"]: r for r in rows if r["student_id"] == "ada"}
    assert set(ada_rows) == {"why", "plot-task"} and ada_rows["why"]["score"] == ""
    assert "sum of the exponentials" in ada_rows["why"]["answer"]

    run_cli(course, "feedback", NAME)
    page = " ".join(visible_text((course.feedback / "ada" / NAME / "index.html").read_text())
                    .split())
    assert "awaiting a grade" in page and "7 of the 9 points" in page

    ada_rows["why"].update(score="2.5", comment="Right idea; say why exp keeps it positive.")
    ada_rows["plot-task"].update(score="4")
    path = course.root / "graded.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(ada_rows.values())
    result = run_cli(course, "manual", NAME, "--import", str(path))
    assert result.returncode == 0, result.stderr[-2000:]

    ada = _export(course)["ada"][NAME]
    assert ada["score"] == 8.5 and ada["cells"]["why"] == {"score": 2.5, "max_score": 3.0}
    run_cli(course, "feedback", NAME)
    page = visible_text((course.feedback / "ada" / NAME / "index.html").read_text())
    assert "8.5 / 9" in page and "graded by hand" in page
    assert "Right idea; say why exp keeps it positive." in page
    assert "awaiting a grade" not in page
    run_cli(course, "report", NAME)
    report = " ".join(visible_text((course.root / "reports" / f"{NAME}.html").read_text())
                      .split())
    assert "Hand grades pending: 1 answer(s) in 1 submission(s)" in report   # bob's task

    # Grading again keeps a hand grade while its answer is the same...
    result = run_cli(course, "grade", NAME, "--force")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _export(course)["ada"][NAME]["score"] == 8.5
    # ... and drops it once the answer changed.
    _answer(course, "ada", "A new essay: the exponentials are divided by their sum.")
    result = run_cli(course, "grade", NAME)
    assert result.returncode == 0, result.stderr[-2000:]
    ada = _export(course)["ada"][NAME]
    assert ada["cells"]["why"]["needs_manual_grade"] is True
    assert ada["cells"]["plot-task"]["needs_manual_grade"] is True    # the notebook changed
    assert ada["score"] == 2.0


@pytest.mark.parametrize(("row", "why"), [
    ({"score": "3.5"}, "outside 0..3"),
    ({"score": "-1"}, "outside 0..3"),
    ({"score": "nan"}, "outside 0..3"),
    ({"score": "two"}, "is not a number"),
    ({"student_id": "nobody"}, "unknown student"),
    ({"grade_id": "test-double"}, "is not a cell of essay graded by hand"),
])
def test_a_bad_line_refuses_the_whole_file_and_changes_nothing(course, row, why):
    _answer(course, "cy", "An answer.")
    assert run_cli(course, "grade", NAME).returncode == 0
    before = _export(course)
    good = {"student_id": "cy", "notebook": NAME, "grade_id": "plot-task", "max_score": "4",
            "score": "1", "comment": "fine", "answer": ""}
    bad = {**good, "grade_id": "why", "max_score": "3", **row}
    path = course.root / "bad.csv"
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(good))
        writer.writeheader()
        writer.writerows([good, bad])
    result = run_cli(course, "manual", NAME, "--import", str(path))
    assert result.returncode == 2
    assert "line 3" in result.stderr and why in result.stderr, result.stderr
    assert _export(course) == before
