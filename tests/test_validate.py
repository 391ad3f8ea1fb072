"""The hidden tests can fail: every catalogued mutant loses marks, every variant keeps them.

This runs ``validate`` — the real release and grading pipeline — on every assignment.
"""

from __future__ import annotations

import pytest

from autograder.catalogue import implementations
from autograder.course import Course
from autograder.validate import validate

from .conftest import REPO

MINIMUM = {"attention-scoring": (15, 5),    # mutants, variants the issues ask for
           "seq2seq-attention": (12, 5),
           "multihead-attention": (15, 5)}


@pytest.mark.parametrize("assignment", Course.at(REPO).assignments())
def test_validate_kills_every_mutant_and_passes_every_variant(assignment):
    result = validate(Course.at(REPO), assignment, jobs=2)
    print(result.summary())
    by_student = {c.student: c for c in result.checks}
    assert by_student["solution"].ok, "the reference solution must earn full marks"
    assert by_student["release"].ok, "the untouched release must earn 0"
    survivors = [c.student for c in result.mutants if not c.ok]
    assert not survivors, f"mutants that kept full marks: {survivors}"
    failed_variants = [(c.student, c.failed_tests) for c in result.variants if not c.ok]
    assert not failed_variants, f"correct variants that lost marks: {failed_variants}"
    least_mutants, least_variants = MINIMUM.get(assignment, (1, 1))
    assert len(result.mutants) == len(implementations(assignment, "mutant")) >= least_mutants
    assert len(result.variants) == len(implementations(assignment, "variant")) >= least_variants


def test_each_mutant_describes_its_mistake():
    for assignment in Course.at(REPO).assignments():
        for impl in implementations(assignment, "mutant") + implementations(assignment, "variant"):
            assert impl.description != impl.name, f"{impl.path} needs a docstring"
