"""Every assignment's hidden cases, run in this process (seconds, not minutes).

The same question ``validate`` answers through nbgrader and the sandbox
(``tests/test_validate.py``), asked directly of the hidden cases and the probe: the
reference solution passes every graded cell, each catalogued mutant fails at least one,
each correct variant fails none. A failure here names the cell and the reason at once.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from autograder.catalogue import implementations
from autograder.course import Course
from autograder.dryrun import dry_run

from .conftest import REPO

COURSE = Course.at(REPO)
CATALOGUE = [(a, impl) for a in COURSE.assignments()
             for impl in implementations(a, "mutant") + implementations(a, "variant")]
INDEPENDENT = [(folder.name, module)
               for folder in sorted((Path(__file__).parent / "independent").iterdir())
               if folder.name in COURSE.assignments()
               for module in sorted(folder.glob("*.py"))]


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


@pytest.mark.parametrize(("assignment", "module"), INDEPENDENT,
                         ids=[f"{a}:{m.stem}" for a, m in INDEPENDENT])
def test_independent_implementations_pass_or_fail_as_written(assignment, module):
    """Written from the contract alone (tests/independent/): correct_* pass, wrong_* fail."""
    failing = _failing(assignment, module.read_text())
    if module.stem.startswith("correct_"):
        assert failing == {}, f"{module.stem} fails"
    else:
        assert failing, f"{module.stem} passes every hidden case"
