"""Implementations written from the contract alone, by someone who never saw the tests.

``tests/independent/<assignment>/correct_*.py`` (complete implementations) must earn full
marks and ``wrong_*.py`` less than full, graded by the real ``grade`` pipeline. A wrong module
keeps only the function(s) with its one mistake, as the catalogue's mutants do; the other
functions are the reference solution's.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.grading import grade

from .conftest import filled, make_course, submit

FOLDER = Path(__file__).parent / "independent"
ASSIGNMENTS = sorted(p.name for p in FOLDER.iterdir()
                     if p.is_dir() and p.name != "hostile" and any(p.glob("*.py")))
MODULES = [(a, m) for a in ASSIGNMENTS for m in sorted((FOLDER / a).glob("*.py"))]
# The least each assignment's independent authors were asked for: (correct, wrong).
MINIMUM = {"attention-scoring": (4, 8), "seq2seq-attention": (4, 8),
           "multihead-attention": (4, 10)}


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("independent") / "course", ASSIGNMENTS)
    for assignment, module in MODULES:
        submit(course, module.stem.replace("_", "-"),
               filled(course, module.read_text(), assignment), assignment)
    return {(o.assignment, o.student): o
            for o in grade(course, ASSIGNMENTS, jobs=2, progress=False)}


@pytest.mark.parametrize("assignment", ASSIGNMENTS)
def test_there_are_independent_implementations(assignment):
    modules = [m.stem for a, m in MODULES if a == assignment]
    least_correct, least_wrong = MINIMUM[assignment]
    assert len([m for m in modules if m.startswith("correct_")]) >= least_correct
    assert len([m for m in modules if m.startswith("wrong_")]) >= least_wrong


@pytest.mark.parametrize(("assignment", "module"), MODULES,
                         ids=[f"{a}:{m.stem}" for a, m in MODULES])
def test_independent_implementation_gets_the_grade_it_deserves(outcomes, assignment, module):
    outcome = outcomes[(assignment, module.stem.replace("_", "-"))]
    max_score = sum(c.max_score for c in outcome.cells)
    failed = [(c.grade_id, c.message[:200]) for c in outcome.cells if c.score < c.max_score]
    if module.stem.startswith("correct_"):
        assert outcome.score == max_score, failed
    else:
        assert outcome.score < max_score, f"{module.stem} kept full marks"
