"""A class hands in the hostile-content corpus; the grader's browser stays its own.

The corpus (corpus.py, red_team.py: every payload kind, placed in a written answer, a
cell the student adds, a code output, a student id or a name) is handed in to a
``short-answer`` course and graded by the real pipeline (``python -m autograder grade``),
then ``feedback``, ``report``, ``export --csv`` and ``manual --export`` run. In Chromium,
``make formgrader`` serves the course: every grading page, the students' pages and lists,
every feedback page and annotated notebook (from disk) and the report are opened, the
student's links, summaries and buttons clicked, the student's name shown. Then:

* no payload ran or made a request: no dialog, console message or request carrying the
  payloads' mark, on any page;
* nothing left any page: every request is to the formgrader's own origin, or, for a page
  opened from disk, to its own folder or the feedback's ``_static``;
* the honest parts still show and grade: every hostile notebook earns its test's point and
  awaits the hand grade, its honest sentence, typeset formula and printed line are on its
  grading page and its feedback; the honest student's grade is as if alone;
* no cell of either CSV starts a formula, and every student id comes back from the CSV as
  the gradebook has it (``manual --import`` of a filled sheet grades the right students).

And the watch can fail: a page rendered by plain nbconvert from the same notebooks, opened
the same way, does run payloads (test_the_watch_sees_what_an_unguarded_page_runs).
"""

from __future__ import annotations

import csv
import json
import urllib.error
import urllib.request

import pytest
from nbconvert.exporters import HTMLExporter
from nbgrader.api import Gradebook

from autograder.course import Course
from autograder.course.spreadsheet import from_cell
from tests.conftest import run_cli
from tests.formgrading import (
    ESSAY,
    NAME,
    TEST,
    check,
    make_formgrader,
    make_short_answer_course,
    serve,
)

from .browsing import new_page, visit_feedback, visit_formgrader
from .corpus import ALL
from .hostile import HONEST, Class, Watch, hand_in, name_students

pytestmark = pytest.mark.xdist_group("jupyter")
FORMULA = ("=", "+", "-", "@", "\t", "\r")


@pytest.fixture(scope="module")
def graded(tmp_path_factory) -> tuple[Course, Class]:
    """The course, every submission graded, feedback, report and exports written."""
    course = make_short_answer_course(tmp_path_factory.mktemp("hostile") / "course")
    handed_in = hand_in(course, ALL, per_student=12)
    check(run_cli(course, "grade", NAME, "--jobs", "2"))
    name_students(course, handed_in)
    check(run_cli(course, "feedback", NAME))
    check(run_cli(course, "report", NAME))
    check(run_cli(course, "export", "--csv", str(course.root / "grades.csv"),
                  "--json", str(course.root / "grades.json")))
    check(run_cli(course, "manual", NAME, "--export", str(course.root / "hand.csv")))
    return course, handed_in


@pytest.fixture(scope="module")
def formgrader(graded, tmp_path_factory):
    course, _ = graded
    with serve(make_formgrader(course), tmp_path_factory.mktemp("hostile-server")) as server:
        yield server


def test_the_honest_parts_still_grade(graded):
    course, handed_in = graded
    students = json.loads((course.root / "grades.json").read_text())["students"]
    assert set(students) == set(handed_in.students)          # no student lost or merged
    for student in handed_in.students:
        cells = students[student][NAME]["cells"]
        assert cells[TEST] == {"score": 1.0, "max_score": 1.0}, student
        assert cells[ESSAY] == {"score": 0.0, "max_score": 3.0, "needs_manual_grade": True}


def test_no_csv_cell_starts_a_formula_and_ids_come_back(graded):
    course, handed_in = graded
    for sheet in ("grades.csv", "hand.csv"):
        with (course.root / sheet).open(newline="") as handle:
            rows = list(csv.reader(handle))
        formulas = [(n, cell) for n, row in enumerate(rows, 1) for cell in row
                    if cell.startswith(FORMULA) and not _is_number(cell)]
        assert formulas == [], f"{sheet}: {formulas[:5]}"
    # A grader fills the sheet in and imports it: every student, hostile ids included,
    # gets their own grade.
    path = course.root / "hand.csv"
    with path.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(handed_in.students)
    for n, row in enumerate(rows):
        row["score"] = str(n % 4)
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    check(run_cli(course, "manual", NAME, "--import", str(path)))
    check(run_cli(course, "export", "--json", str(course.root / "after.json")))
    students = json.loads((course.root / "after.json").read_text())["students"]
    given = {}
    with Gradebook(course.db_url) as gb:
        known = {s.id for s in gb.students}
    for n, row in enumerate(rows):
        given[_student_of(row["student_id"], known)] = float(n % 4)
    assert set(given) == set(handed_in.students)
    for student, score in given.items():
        assert students[student][NAME]["cells"][ESSAY]["score"] == score, student


def _student_of(cell: str, known: set[str]) -> str:
    """The gradebook's student a CSV cell names (a neutralised formula keeps its text)."""
    student = from_cell(cell)
    assert student in known, cell
    return student


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_no_payload_acts_in_the_formgrader(graded, formgrader, browser):
    course, handed_in = graded
    watch = visit_formgrader(browser, formgrader["url"], course, handed_in, honest=True)
    assert watch.fired == [], "\n".join(watch.fired)
    assert watch.left == [], "\n".join(watch.left)


def test_no_payload_acts_in_feedback_or_report(graded, browser):
    course, handed_in = graded
    watch = visit_feedback(browser, course, handed_in, honest=True)
    assert watch.fired == [], "\n".join(watch.fired)
    assert watch.left == [], "\n".join(watch.left)


def test_feedback_keeps_the_pages_and_the_release_only(graded):
    course, handed_in = graded
    for student in handed_in.students:
        folder = course.feedback / student / NAME
        assert sorted(p.name for p in folder.iterdir()) == ["index.html", f"{NAME}.html"]


def test_the_watch_sees_what_an_unguarded_page_runs(graded, browser, tmp_path):
    """The same autograded notebooks, rendered by nbconvert without the course's guards
    and opened the same way: the watch must see payloads run and requests leave."""
    course, handed_in = graded
    watch = Watch(allowed=(tmp_path.as_uri() + "/",))
    page = new_page(browser, watch)
    for student in list(handed_in.groups)[:3]:
        html, _ = HTMLExporter().from_filename(
            str(course.autograded / student / NAME / f"{NAME}.ipynb"))
        path = tmp_path / f"{student}.html"
        path.write_text(html)
        watch.where = f"plain nbconvert, {student}"
        page.goto(path.as_uri())
        page.wait_for_load_state("networkidle")
    page.context.close()
    assert len({hit.split(": ")[-1] for hit in watch.fired}) >= 5, watch.fired
    assert watch.left, "a plain page's payloads reach outside it"


def test_the_formgrader_runs_no_code_and_serves_no_file(graded, formgrader):
    """What a script would reach if one ran in a grading page, with the grader's session:
    no kernel, session, terminal or kernelspec, no file or conversion, no plain nbgrader
    step (autograde would run students' code unsandboxed), no student file but images —
    while the formgrader's own API answers."""
    course, handed_in = graded
    origin, token = formgrader["url"].split("/formgrader?token=")
    with Gradebook(course.db_url) as gb:
        submission = gb.find_submission_notebook(NAME, NAME, HONEST).id
    refused = [("POST", "/api/kernels"), ("GET", "/api/kernels"), ("POST", "/api/sessions"),
               ("GET", "/api/sessions"), ("GET", "/api/kernelspecs"), ("POST", "/api/terminals"),
               ("GET", "/api/contents"), ("PUT", "/api/contents/planted.py"),
               ("GET", "/files/nbgrader_config.py"), ("GET", "/api/config/notebook"),
               ("GET", f"/nbconvert/html/autograded/{HONEST}/{NAME}/{NAME}.ipynb"),
               ("GET", "/lab"), ("GET", "/tree"), ("GET", "/terminals/1"),
               ("POST", f"/formgrader/api/submission/{NAME}/{HONEST}/autograde"),
               ("POST", f"/formgrader/api/assignment/{NAME}/collect"),
               ("POST", f"/formgrader/api/assignment/{NAME}/release"),
               ("POST", f"/formgrader/api/assignment/{NAME}/generate_feedback"),
               ("GET", f"/formgrader/submissions/{submission}/{NAME}.ipynb"),
               ("GET", f"/formgrader/submissions/{submission}/timestamp.txt")]
    answers = {f"{method} {path}": _status(origin + path, method, token)
               for method, path in refused}
    assert all(status in (403, 404, 405) for status in answers.values()), answers
    assert not (course.root / "planted.py").exists()
    assert _status(origin + "/formgrader/api/students", "GET", token) == 200
    assert _status(origin + "/api/status", "GET", token) == 200


def _status(url: str, method: str, token: str) -> int:
    request = urllib.request.Request(url, method=method, data=b"{}" if method != "GET" else None,
                                     headers={"Authorization": f"token {token}",
                                              "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=30) as answer:
            return answer.status
    except urllib.error.HTTPError as error:
        return error.code
