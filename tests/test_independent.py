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

from .conftest import ASSIGNMENT, filled, make_course, submit

FOLDER = Path(__file__).parent / "independent" / ASSIGNMENT
MODULES = sorted(FOLDER.glob("*.py"))


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("independent") / "course")
    for module in MODULES:
        submit(course, module.stem.replace("_", "-"), filled(course, module.read_text()))
    return {o.student: o for o in grade(course, [ASSIGNMENT], jobs=2, progress=False)}


def test_there_are_independent_implementations():
    assert len([m for m in MODULES if m.stem.startswith("correct_")]) >= 4
    assert len([m for m in MODULES if m.stem.startswith("wrong_")]) >= 8


@pytest.mark.parametrize("module", MODULES, ids=[m.stem for m in MODULES])
def test_independent_implementation_gets_the_grade_it_deserves(outcomes, module):
    outcome = outcomes[module.stem.replace("_", "-")]
    max_score = sum(c.max_score for c in outcome.cells)
    failed = [(c.grade_id, c.message[:200]) for c in outcome.cells if c.score < c.max_score]
    if module.stem.startswith("correct_"):
        assert outcome.score == max_score, failed
    else:
        assert outcome.score < max_score, f"{module.stem} kept full marks"
