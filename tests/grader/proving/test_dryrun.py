"""Every assignment's hidden cases, run in this process (seconds, not minutes).

The same question ``validate`` answers through nbgrader and the sandbox
(``tests/grader/commands/test_validate.py``), asked directly of the hidden cases and the probe: the
reference solution passes every graded cell, each catalogued mutant fails at least one,
each correct variant fails none. A failure here names the cell and the reason at once.
"""

from __future__ import annotations

import pytest

from autograder.course import Course
from autograder.proving.catalogue import implementations
from autograder.proving.dryrun import dry_run
from tests.conftest import REPO, independent, is_variant

COURSE = Course.at(REPO)
CATALOGUE = [(a, impl) for a in COURSE.assignments()
             for impl in implementations(a, "mutant") + implementations(a, "variant")]
WRITTEN_APART = [(assignment, module) for assignment in COURSE.assignments()
                 for module in independent(assignment)]


def _failing(assignment: str, code: str | None = None) -> dict[str, str]:
    verdicts = dry_run(COURSE.source / assignment, code)
    return {grade_id: message for grade_id, message in verdicts.items() if message}


@pytest.mark.parametrize("assignment", COURSE.assignments())
def test_the_reference_solution_passes_every_hidden_case(assignment):
    assert _failing(assignment) == {}


@pytest.mark.parametrize(("assignment", "impl"), CATALOGUE,
                         ids=[f"{a}:{i.kind}:{i.name}" for a, i in CATALOGUE])
def test_hidden_cases_tell_mutants_from_variants(assignment, impl):
    failing = _failing(assignment, impl.code)
    if impl.kind == "mutant":
        assert failing, f"{impl.name} ({impl.description}) passes every hidden case"
    else:
        assert failing == {}, f"{impl.name} ({impl.description}) fails"


@pytest.mark.parametrize(("assignment", "module"), WRITTEN_APART,
                         ids=[f"{a}:{m.parent.name}:{m.stem}" for a, m in WRITTEN_APART])
def test_independent_implementations_pass_or_fail_as_written(assignment, module):
    """Written from the contract alone (tests/independent/): variants pass, mutants fail."""
    failing = _failing(assignment, module.read_text())
    if is_variant(module):
        assert failing == {}, f"{module.stem} fails"
    else:
        assert failing, f"{module.stem} passes every hidden case"
