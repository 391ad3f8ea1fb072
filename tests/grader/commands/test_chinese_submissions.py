"""A submission of the Chinese notebook is graded exactly as the English one, and gets its
feedback page in Chinese.

Students may hand in ``<a>.ipynb`` or ``<a>.zh_CN.ipynb`` (the name the release gives the
Chinese notebook). With the same code, both get the same verdict on every cell: the
translated locked markdown cells cost nothing (the grader puts the course's cells back
as released before grading), while an edited test cell is still put back and graded.
Every assignment is graded (about 35 s for each of the two batches on 2 cores).
"""

from __future__ import annotations

import nbformat
import pytest

from autograder.commands.feedback import feedback
from autograder.commands.grade import grade
from autograder.proving.catalogue import implementations
from autograder.proving.fill import fill_release
from tests.conftest import ASSIGNMENT, REPO, make_course, submit, visible_text

pytestmark = pytest.mark.xdist_group("chinese-submissions")

ZH = "zh_CN"
ASSIGNMENTS = sorted(p.name for p in (REPO / "exercises").iterdir() if p.is_dir())
MUTANT = "scaled_by_sqrt_n"


def _release(course, assignment, language=None):
    name = f"{assignment}.{language}" if language else assignment
    return nbformat.read(course.release / assignment / f"{name}.ipynb", as_version=4)


def _source(course, assignment):
    return nbformat.read(course.source / assignment / f"{assignment}.ipynb", as_version=4)


def _hand_in(course, student, assignment, notebook, name):
    folder = course.submitted / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    nbformat.write(notebook, folder / f"{name}.ipynb")


def _grade(root, assignments):
    course = make_course(root, assignments)
    for assignment in assignments:
        source = _source(course, assignment)
        english = fill_release(_release(course, assignment), source)
        chinese = fill_release(_release(course, assignment, ZH), source)
        submit(course, f"en-{assignment}", english, assignment)
        _hand_in(course, f"zh-{assignment}", assignment, chinese, f"{assignment}.{ZH}")
    if ASSIGNMENT in assignments:
        source = _source(course, ASSIGNMENT)
        chinese = fill_release(_release(course, ASSIGNMENT, ZH), source)
        # The Chinese notebook downloaded from the Chinese site as <a>.ipynb.
        submit(course, "zh-renamed", chinese)
        # Both handed in: <a>.ipynb is graded (here the English release, unanswered).
        _hand_in(course, "both", ASSIGNMENT, chinese, f"{ASSIGNMENT}.{ZH}")
        submit(course, "both", _release(course, ASSIGNMENT))
        # A mistake costs the same marks in either language.
        mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == MUTANT)
        submit(course, "en-mutant", fill_release(_release(course, ASSIGNMENT), source,
                                                 mutant.code))
        _hand_in(course, "zh-mutant", ASSIGNMENT,
                 fill_release(_release(course, ASSIGNMENT, ZH), source, mutant.code),
                 f"{ASSIGNMENT}.{ZH}")
        # A Chinese notebook whose test cells were emptied and whose locked markdown was
        # edited: the tests are put back and run (an unanswered notebook: 0 marks).
        edited = _release(course, ASSIGNMENT, ZH)
        for cell in edited.cells:
            if cell.metadata.get("nbgrader", {}).get("grade") and cell.cell_type == "code":
                cell.source = "pass"
            elif cell.cell_type == "markdown" and cell.metadata["nbgrader"].get("locked"):
                cell.source += "\n\n我改了这段说明。"
        _hand_in(course, "zh-edited-tests", ASSIGNMENT, edited, f"{ASSIGNMENT}.{ZH}")
    outcomes = {o.student: o for o in grade(course, assignments, jobs=2, progress=False)}
    pages = {page.parent.parent.name: page.read_text()
             for page in feedback(course, assignments)}
    return course, outcomes, pages


@pytest.fixture(scope="module")
def graded_scoring(tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("zh") / "course", [ASSIGNMENT])


@pytest.fixture(scope="module")
def graded_others(tmp_path_factory):
    return _grade(tmp_path_factory.mktemp("zh-others") / "course",
                  [a for a in ASSIGNMENTS if a != ASSIGNMENT])


@pytest.fixture
def graded(request, assignment):
    name = "graded_scoring" if assignment == ASSIGNMENT else "graded_others"
    return request.getfixturevalue(name)


def _verdicts(outcome):
    return [(c.grade_id, c.notebook, c.score, c.max_score, c.status, c.message,
             c.needs_manual_grade) for c in outcome.cells]


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_chinese_notebook_is_graded_as_the_english_one(graded, assignment):
    _, outcomes, _ = graded
    english, chinese = outcomes[f"en-{assignment}"], outcomes[f"zh-{assignment}"]
    assert _verdicts(chinese) == _verdicts(english)
    tested = [c for c in english.cells if c.graded_by == "tests"]
    assert tested and all(c.score == c.max_score for c in tested)      # the solution
    assert chinese.reasons == english.reasons == []
    assert not chinese.abnormal
    assert (english.language, chinese.language) == ("en", ZH)


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_the_feedback_page_is_in_the_notebooks_language(graded, assignment):
    _, _, pages = graded
    english, chinese = pages[f"en-{assignment}"], pages[f"zh-{assignment}"]
    assert '<html lang="en">' in english and '<html lang="zh-CN">' in chinese
    assert "Tests and answers" in english and "awaiting a grade" in english
    assert "测试与答案" in chinese and "等待评分" in chinese and "通过" in chinese
    text = visible_text(chinese)
    for word in ("Tests and answers", "awaiting a grade", "Student:", "points are for",
                 "What could not be graded", ">passed<"):
        assert word not in text and word not in chinese


def test_a_chinese_notebook_under_the_english_name_is_chinese(graded_scoring):
    _, outcomes, pages = graded_scoring
    assert _verdicts(outcomes["zh-renamed"]) == _verdicts(outcomes[f"en-{ASSIGNMENT}"])
    assert outcomes["zh-renamed"].language == ZH
    assert '<html lang="zh-CN">' in pages["zh-renamed"]


def test_when_both_notebooks_are_handed_in_the_english_name_is_graded(graded_scoring):
    _, outcomes, pages = graded_scoring
    both = outcomes["both"]
    assert all(c.score == 0 for c in both.cells)            # the unanswered <a>.ipynb
    assert both.language == "en"
    assert both.reasons == [f"{ASSIGNMENT}.{ZH}.ipynb was handed in as well as "
                            f"{ASSIGNMENT}.ipynb: {ASSIGNMENT}.ipynb was graded, "
                            f"{ASSIGNMENT}.{ZH}.ipynb was not"]
    assert "was handed in as well as" in pages["both"]


def test_a_mistake_costs_the_same_in_either_language(graded_scoring):
    _, outcomes, _ = graded_scoring
    english, chinese = outcomes["en-mutant"], outcomes["zh-mutant"]
    assert _verdicts(chinese) == _verdicts(english)
    assert 0 < sum(c.score for c in chinese.cells) < sum(
        c.score for c in outcomes[f"en-{ASSIGNMENT}"].cells)


def test_edited_test_cells_of_a_chinese_notebook_are_still_put_back(graded_scoring):
    _, outcomes, _ = graded_scoring
    edited = outcomes["zh-edited-tests"]
    tests = [c for c in edited.cells if c.graded_by == "tests"]
    assert tests and all(c.score == 0 and c.status == "failed" for c in tests)
    assert not edited.abnormal
