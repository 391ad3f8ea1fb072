"""Correct work never loses marks, however loaded the machine (make test-full).

Honest submissions — every catalogued correct implementation of two assignments, the
solution and its variants, 18 notebooks in all, each handed in by one student — are each
graded alone on an idle machine first; then the whole batch, two at a time, with cold
kernels and with kernels forked by zygotes, while the machine is strained (tests/load.py):
every core kept busy by processes of other sessions, grading's processes frozen at random
for seconds, half the memory taken, every kernel's start-up delayed, a kernel killed in
every grading process. Every submission must get full marks, and the very verdicts it got
alone.

Grading keeps this promise by limiting cells by the CPU time they use, never by how long a
busy machine makes them wait (autograder.submission.execute), and by grading again whatever had
something abnormal happen to it (autograder.batch.supervise).
"""

from __future__ import annotations

import contextlib
import os

import pytest

from autograder.commands.grade import grade
from autograder.proving.catalogue import implementations
from tests import load
from tests.conftest import filled, full_marks, make_course, submit

pytestmark = [pytest.mark.full, pytest.mark.xdist_group("stress")]

ASSIGNMENTS = ["attention-scoring", "multihead-attention"]


def _distinct(course) -> dict[str, tuple[str, object]]:
    """{implementation: (assignment, notebook)}: the solution and every correct variant of
    each assignment."""
    return {f"{assignment}--{name}": (assignment, filled(course, code, assignment))
            for assignment in ASSIGNMENTS
            for name, code in [("solution", None)] +
            [(v.name, v.code) for v in implementations(assignment, "variant")]}


def _honest(names: list[str]) -> dict[str, str]:
    """{student: implementation}: one student for each distinct implementation in ``names``
    (a student's id is ``<n>-<assignment>--<implementation>``)."""
    return {f"{i:02d}-{name}": name for i, name in enumerate(names)}


def _implementation(student: str) -> str:
    return student.split("-", 1)[1]


def _verdicts(outcome) -> list[tuple]:
    return [(c.grade_id, c.score, c.status, c.message) for c in outcome.cells]


@pytest.fixture(scope="module")
def alone(tmp_path_factory) -> dict[str, list[tuple]]:
    """The verdicts of each distinct honest implementation graded on its own on an idle
    machine (a repeated one is the same notebook: it is graded alone once)."""
    course = make_course(tmp_path_factory.mktemp("alone") / "course", ASSIGNMENTS)
    distinct = _distinct(course)
    for name, (assignment, notebook) in distinct.items():
        submit(course, f"00-{name}", notebook, assignment)
    outcomes = grade(course, jobs=1, progress=False)
    assert len(outcomes) == len(distinct)
    for outcome in outcomes:
        assert full_marks(outcome), (outcome.student, outcome.reasons)
        assert not outcome.attempts, (outcome.student, outcome.attempts)
    return {_implementation(o.student): _verdicts(o) for o in outcomes}


@contextlib.contextmanager
def _cold(cold: bool):
    if cold:
        os.environ["AUTOGRADER_COLD_KERNELS"] = "1"
    try:
        yield
    finally:
        os.environ.pop("AUTOGRADER_COLD_KERNELS", None)


@contextlib.contextmanager
def _strain(name: str, root):
    """The strain ``name`` on the machine while grading the course at ``root``; yields
    what the pauser did (``frozen``, ``killed``: filled in when the block ends)."""
    with contextlib.ExitStack() as stack:
        if name == "busy and frozen at random":
            stack.enter_context(load.busy_cores(6))
            yield stack.enter_context(load.pauses(root, longest=3.0, seed=1))
        elif name == "half the memory taken":
            stack.enter_context(load.memory_taken(0.5))
            stack.enter_context(load.busy_cores(2))
            yield {}
        elif name == "every start-up delayed":
            stack.enter_context(load.busy_cores(2))
            yield stack.enter_context(load.pauses(root, longest=8.0, births_only=True, seed=2))
        else:
            yield stack.enter_context(load.pauses(root, kills=True, seed=3))


STRAINS = ["busy and frozen at random", "half the memory taken", "every start-up delayed",
           "a kernel killed in each grading"]


@pytest.mark.parametrize("kernels", ["cold", "warm"])
@pytest.mark.parametrize("strain", STRAINS)
def test_honest_work_gets_the_same_full_marks_under_strain(alone, strain, kernels,
                                                           tmp_path):
    course = make_course(tmp_path / "course", ASSIGNMENTS)
    distinct = _distinct(course)
    students = _honest(list(distinct))
    for student, name in students.items():
        assignment, notebook = distinct[name]
        submit(course, student, notebook, assignment)
    with _cold(kernels == "cold"), _strain(strain, course.root) as done:
        outcomes = grade(course, jobs=2, progress=False)
    assert len(outcomes) == len(students) >= 18
    if "frozen" in strain or "delayed" in strain:       # the strain did strain
        assert done["frozen"] > 0, done
    if "killed" in strain and os.geteuid() == 0:        # (a kernel of its own user: root)
        assert done["killed"] > 0, done
        assert sum(bool(o.attempts) for o in outcomes) >= done["killed"] // 2
    lost = {o.student: (o.score, o.reasons, o.attempts) for o in outcomes
            if not full_marks(o)}
    assert not lost, f"{len(lost)} of {len(outcomes)} honest submissions lost marks: {lost}"
    differ = {o.student: _verdicts(o) for o in outcomes
              if _verdicts(o) != alone[_implementation(o.student)]}
    assert not differ, differ
