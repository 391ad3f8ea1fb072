"""nbgrader's formgrader on this course's gradebook, as an instructor grades by hand with it.

`make formgrader` is the documented command: JupyterLab with nbgrader's server extension,
started in the course directory (whose nbgrader_config.py gives the course's settings and
gradebook) and bound to localhost. Here the Makefile's target itself is run, on a scratch
course with an ordinary nbgrader assignment of one notebook: an autograded test and a
written answer graded by hand. Three students submit; `python -m autograder grade` grades
them (the written answers await a grade); then, in headless Chromium, the test opens the
URL the command printed, goes to Manual Grading, opens one student's submission, enters a
score and a comment for the written answer and sees them saved. `export`, `manual
--export` and `feedback` must then show that score and that comment, and the others'
answers must still await their grade. A second test uses the formgrader's other fields
(a score given by hand to a failed test, extra credit) and compares the totals of
`export` and `feedback`.

Both run twice: on the course's gradebook.db, and on a gradebook that AUTOGRADER_DB names,
as a team of graders sets it. Nothing is fetched from the network (the browser is told to
refuse anything but localhost; MathJax comes from the formgrader itself). What a hostile
submission cannot do in these pages is tests/grader/display/test_hostile_content.py's.
"""
from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

import pytest
from playwright.sync_api import expect

from autograder.course import Course
from tests.conftest import SCREENSHOTS, run_cli, visible_text
from tests.formgrading import (
    ESSAY,
    NAME,
    answered,
    check,
    make_formgrader,
    make_short_answer_course,
    serve,
    submit,
    wait_until,
)

# A Jupyter server and a browser: on the worker of the JupyterLab tests.
pytestmark = pytest.mark.xdist_group("jupyter")

ANSWERS = {"alice": "Doubling distributes over sums: double(x + y) = double(x) + double(y).",
           "bob": "Because 2 is a constant.",
           "carol": "It keeps sums and multiples: double(a x + b y) = a double(x) + b double(y)."}
WRONG = {"carol"}              # whose double() fails its test
SCORE, COMMENT = "2.5", "Right idea; name the property: additivity (and homogeneity)."
PATIENCE_MS = 120_000          # a loaded machine may take long to answer; no fixed sleeps
_check = check


@pytest.fixture(scope="module", params=["gradebook.db", "AUTOGRADER_DB"])
def course(request, tmp_path_factory):
    """A course directory like this repository's (its nbgrader_config.py), with the
    assignment released, three submissions, graded: the written answers await a grade.

    Its gradebook is the course's gradebook.db, or (``AUTOGRADER_DB``) a database outside
    it that the environment names, as a team sets it for every command and for
    `make formgrader` (here an SQLite file; tests/grader/batch has PostgreSQL)."""
    tmp = tmp_path_factory.mktemp("formgrader")
    with pytest.MonkeyPatch.context() as environment:
        if request.param == "AUTOGRADER_DB":
            (tmp / "team").mkdir()
            environment.setenv("AUTOGRADER_DB", f"sqlite:///{tmp / 'team' / 'gradebook.db'}")
        else:
            environment.delenv("AUTOGRADER_DB", raising=False)
        course = make_short_answer_course(tmp / "course")
        for student, essay in ANSWERS.items():
            submit(course, student, answered(course, "x + 1" if student in WRONG else "x + x",
                                             essay))
        _check(run_cli(course, "grade", NAME))
        grades = _export(course)
        for student in ANSWERS:
            assert grades[student][NAME]["cells"][ESSAY] \
                == {"score": 0.0, "max_score": 3.0, "needs_manual_grade": True}
        yield course


def _export(course: Course) -> dict:
    path = course.root / "grades.json"
    _check(run_cli(course, "export", "--json", str(path)))
    return json.loads(path.read_text())["students"]


@pytest.fixture(scope="module")
def formgrader(course, tmp_path_factory):
    """`make formgrader` on the scratch course (a free port; Jupyter's own files in a
    temporary folder); yields the URL it prints, with its token."""
    with serve(make_formgrader(course), tmp_path_factory.mktemp("formgrader-server")) as server:
        yield server


@pytest.fixture
def browsing(browser, formgrader):
    """(page, failed): a page of a fresh browser context that reaches localhost only, and
    the list that the answers of status 400 or more go to."""
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.set_default_timeout(PATIENCE_MS)
    context.set_default_navigation_timeout(PATIENCE_MS)
    context.route(re.compile(r"^(?!http://127\.0\.0\.1[:/]).*"), lambda route: route.abort())
    page = context.new_page()
    failed: list[str] = []
    page.on("response", lambda r: r.status >= 400 and failed.append(f"{r.status} {r.url}"))
    yield page, failed
    context.close()


def _open_submission(page, url: str, student: str) -> None:
    """From the formgrader's first page to ``student``'s submission, as an instructor
    clicks: Manual Grading, the assignment, its notebook, the student (names shown)."""
    page.goto(url)
    page.wait_for_url(re.compile(r"/formgrader/manage_assignments/?$"))
    page.get_by_role("link", name="Manual Grading").first.click()
    page.wait_for_url(re.compile(r"/formgrader/gradebook/?$"))
    page.locator("#main-table").get_by_role("link", name=NAME, exact=True).click()
    page.wait_for_url(re.compile(rf"/formgrader/gradebook/{NAME}/?$"))
    page.locator("#main-table").get_by_role("link", name=NAME, exact=True).click()
    page.wait_for_url(re.compile(rf"/formgrader/gradebook/{NAME}/{NAME}/?$"))
    # The button shows the names of the rows there are: wait for every student's row.
    expect(page.locator("#main-table td.name")).to_have_count(len(ANSWERS),
                                                          timeout=PATIENCE_MS)
    page.get_by_role("button", name="Show All Names").click()
    page.locator("#main-table").get_by_role("link", name=student, exact=True).click()
    page.wait_for_url(re.compile(r"/formgrader/submissions/\w+/?$"))
    _wait_for_the_form(page)


def _wait_for_the_form(page) -> None:
    """The grade and comment fields work once the page's grades and comments are loaded
    (formgrade.js binds the fields to them then)."""
    wait_until(page, "() => window.formgrader && formgrader.grades.loaded"
                     " && formgrader.comments.loaded", PATIENCE_MS)


def _saves(page, kind: str):
    """Expect the formgrader's PUT of a grade or a comment (``kind``)."""
    return page.expect_response(lambda r: r.request.method == "PUT"
                                and f"/formgrader/api/{kind}/" in r.url)


def test_a_score_and_a_comment_entered_in_formgrader_reach_export_and_feedback(
        course, formgrader, browsing):
    page, failed = browsing
    _open_submission(page, formgrader["url"], "alice")
    answer = page.locator(".nbgrader_cell").filter(has=page.locator(f"#{ESSAY}"))
    assert ANSWERS["alice"] in answer.inner_text()

    score = page.locator(f"input.score#{ESSAY}")
    with _saves(page, "grade") as saved:
        score.fill(SCORE)
        score.press("Tab")                 # leaving the field saves it
    grade = saved.value.json()
    assert saved.value.ok and grade["manual_score"] == float(SCORE), grade
    assert grade["needs_manual_grade"] is False, grade
    comment = page.locator(f"textarea#{ESSAY}-comment")
    with _saves(page, "comment") as saved:
        comment.fill(COMMENT)
        comment.press("Tab")
    assert saved.value.ok and saved.value.json()["manual_comment"] == COMMENT

    page.reload()                          # what the formgrader stored, shown again
    _wait_for_the_form(page)
    assert score.input_value() == SCORE and comment.input_value() == COMMENT
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / "formgrader-submission.png", full_page=True)
    page.get_by_role("link", name=NAME, exact=True).last.click()   # the breadcrumb: notebook
    page.wait_for_url(re.compile(rf"/formgrader/gradebook/{NAME}/{NAME}/?$"))
    table = page.locator("#main-table tr")
    pending = ".needs-manual-grade .glyphicon-ok"
    expect(table).to_have_count(len(ANSWERS), timeout=PATIENCE_MS)
    assert table.filter(has_text="alice").locator(".score").inner_text() == "3.5 / 4"
    assert table.filter(has_text="alice").locator(pending).count() == 0
    assert table.filter(has_text="bob").locator(pending).count() == 1
    assert failed == [], failed

    grades = _export(course)
    alice, bob = grades["alice"][NAME], grades["bob"][NAME]
    assert alice["cells"][ESSAY] == {"score": 2.5, "max_score": 3.0}
    assert alice["score"] == 3.5 and alice["max_score"] == 4.0
    assert bob["cells"][ESSAY] == {"score": 0.0, "max_score": 3.0, "needs_manual_grade": True}
    # Every command, the formgrader included, used the gradebook the environment names.
    assert course.gradebook_path.exists() == ("AUTOGRADER_DB" not in os.environ)

    path = course.root / "hand-grades.csv"
    _check(run_cli(course, "manual", NAME, "--export", str(path)))
    with path.open(newline="") as handle:
        rows = {r["student_id"]: r for r in csv.DictReader(handle)}
    assert (rows["alice"]["grade_id"], rows["alice"]["score"], rows["alice"]["comment"]) \
        == (ESSAY, SCORE, COMMENT)
    assert rows["bob"]["score"] == "" and rows["bob"]["comment"] == ""

    _check(run_cli(course, "feedback", NAME))
    alice = _words(course.feedback / "alice" / NAME / "index.html")
    assert f"{NAME}: 3.5 / 4" in alice
    assert f"{ESSAY} {NAME} graded by hand 2.5 / 3 {COMMENT}" in alice, alice
    assert "awaiting a grade" not in alice
    bob = _words(course.feedback / "bob" / NAME / "index.html")
    assert f"{ESSAY} {NAME} awaiting a grade 0 / 3" in bob, bob
    assert COMMENT not in bob


def _words(page: Path) -> str:
    """The words of an HTML page, a space between any two elements' texts."""
    return " ".join(visible_text(re.sub(r"<", " <", page.read_text())).split())


def test_partial_credit_and_extra_credit_entered_in_formgrader_give_one_total(
        course, formgrader, browsing):
    """The formgrader's other fields: a score given by hand to a failed test (partial
    credit) and extra credit on the written answer. nbgrader counts both in a cell's score;
    the export and the feedback page must give the same total."""
    page, failed = browsing
    _open_submission(page, formgrader["url"], "carol")
    entries = [("input.score#test-double", "0.5"),
               (f"input.score#{ESSAY}", "2"),
               (f"input.extra-credit#{ESSAY}_extra_credit", "1")]
    for selector, value in entries:
        field = page.locator(selector)
        with _saves(page, "grade") as saved:
            field.fill(value)
            field.press("Tab")
        assert saved.value.ok, saved.value.status
    assert failed == [], failed

    carol = _export(course)["carol"][NAME]
    assert carol["cells"]["test-double"] == {"score": 0.5, "max_score": 1.0}
    assert carol["cells"][ESSAY] == {"score": 3.0, "max_score": 3.0}     # 2 + 1 extra
    assert carol["score"] == 3.5

    _check(run_cli(course, "feedback", NAME))
    words = _words(course.feedback / "carol" / NAME / "index.html")
    assert f"{NAME}: 3.5 / 4" in words, words
