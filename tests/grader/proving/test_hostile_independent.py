"""Hostile submissions written independently of the grader, graded with honest ones.

``tests/independent/hostile/<assignment>/`` holds attacks written by a red team that read
only the contract, this README's threat model and the student release: Python modules
(filled into the answer cells like the other independent implementations, declaring
``MAX_EARNED``) and edited notebooks (declaring ``metadata.hostile.max_earned``). Graded in
one batch, through the real ``grade`` command, with the independent correct
implementations, no attack may earn more than ``MAX_EARNED``, and every honest submission
must be graded exactly as when it is graded alone.

Waiting out the attacks that hang or stall is most of this module's time (400 s of a
worker's): it runs in ``make test-full`` (which ``.ci/run`` runs); ``make test`` hands the
course's own attacks in (``tests/grader/submission/test_adversarial.py``,
``tests/grader/submission/test_time_limits.py``).
"""

from __future__ import annotations

import ast
from pathlib import Path

import nbformat
import pytest

from autograder.course.outcome import load_outcome
from tests.conftest import (
    ASSIGNMENT,
    INDEPENDENT,
    filled,
    independent,
    make_course,
    run_cli,
    submit,
)

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = [pytest.mark.full, pytest.mark.xdist_group("hostile-independent")]

HOSTILE = INDEPENDENT / "hostile" / ASSIGNMENT
# The notebook's time limit of both batches. The attacks that hang or stall are stopped by
# the same mechanisms at any limit (CPU time, then a wall-clock backstop, with re-runs),
# and waiting them out is most of the batches' time: with the default 120 s this module
# took 894 s in `make test`, with 30 s 401 s (beside a book build) and 342 s alone, of
# which the hanging attack took 132 s, the slow one 91 s. At 15 s it took as long (348 s in
# a fresh clone's make test-full): below 30 s the grace periods of a kernel that will not
# stop, not the limit, are what it waits for. An honest notebook needs about 1 s of CPU.
NOTEBOOK_LIMIT = 30
HONEST = independent(ASSIGNMENT, "variant")
ATTACKS = sorted([*HOSTILE.glob("*.py"), *HOSTILE.glob("*.ipynb")])
ATTACKS = [p for p in ATTACKS if p.name != "make_notebooks.py"]


def _max_earned(path: Path) -> int:
    if path.suffix == ".ipynb":
        return int(nbformat.read(path, as_version=4).metadata["hostile"]["max_earned"])
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "MAX_EARNED":
            return int(ast.literal_eval(node.value))
    raise AssertionError(f"{path.name} declares no MAX_EARNED")


def _student(path: Path, prefix: str) -> str:
    return f"{prefix}-{path.stem.replace('_', '-')}-{path.suffix[1:]}"


def _grade(course) -> dict:
    result = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2", "--timeout", str(NOTEBOOK_LIMIT),
                     timeout=3600)
    assert result.returncode == 0, result.stderr[-2000:]
    return {folder.name: load_outcome(course, folder.name, ASSIGNMENT)
            for folder in course.submitted.iterdir()}


def _submit_honest(course) -> None:
    for module in HONEST:
        submit(course, _student(module, "honest"), filled(course, module.read_text()))


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("hostile") / "course")
    _submit_honest(course)
    for attack in ATTACKS:
        if attack.suffix == ".ipynb":
            submit(course, _student(attack, "attack"), nbformat.read(attack, as_version=4))
        else:
            submit(course, _student(attack, "attack"), filled(course, attack.read_text()))
    return _grade(course)


@pytest.fixture(scope="module")
def alone(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("honest-alone") / "course")
    _submit_honest(course)
    return _grade(course)


def test_the_red_team_covered_the_threat_model():
    assert len(ATTACKS) >= 12
    assert [p for p in ATTACKS if p.suffix == ".ipynb"], "no notebook-level attack"


@pytest.mark.parametrize("attack", ATTACKS, ids=[p.name for p in ATTACKS])
def test_an_attack_earns_nothing_it_did_not_earn(mixed, attack):
    outcome = mixed[_student(attack, "attack")]
    assert outcome is not None, "the submission got no grade at all"
    assert outcome.score <= _max_earned(attack), [
        (c.grade_id, c.score, c.message[:120]) for c in outcome.cells if c.score]


@pytest.mark.parametrize("module", HONEST, ids=[p.stem for p in HONEST])
def test_honest_submissions_keep_exactly_their_marks(mixed, alone, module):
    student = _student(module, "honest")

    def verdicts(outcome):
        return [(c.grade_id, c.score, c.status, c.message) for c in outcome.cells]

    assert verdicts(mixed[student]) == verdicts(alone[student])
    assert mixed[student].score == 14
