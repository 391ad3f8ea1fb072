"""`validate`: prove that an assignment's tests can fail, and only when they should.

In a scratch copy of the course, the assignment is released and graded through the real
pipeline as if these were students:

* ``solution`` — the reference solution: must earn full marks;
* ``release`` — the untouched student release: must earn 0;
* every mutant of the catalogue (a plausible mistake): must lose marks;
* every variant (a correct implementation in another style): must earn full marks.
"""

from __future__ import annotations

import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import nbformat

from ..course import CellResult, Course, Outcome
from ..course.defaults import DEFAULT_TIMEOUT
from ..course.outcome import BY_HAND, BY_TESTS
from ..proving.catalogue import Implementation, implementations
from ..proving.fill import fill_release
from .grade import grade
from .release import release


@dataclass
class Check:
    """One graded implementation and whether its score is what it must be."""

    student: str
    expectation: str        # "full", "zero" or "less than full"
    description: str
    outcome: Outcome

    @property
    def tested(self) -> list[CellResult]:
        """The cells the tests grade; the others (answers, tasks) are graded by hand."""
        return [c for c in self.outcome.cells if c.graded_by == BY_TESTS]

    @property
    def score(self) -> float:
        return sum(c.score for c in self.tested)

    @property
    def max_score(self) -> float:
        return sum(c.max_score for c in self.tested)

    @property
    def by_hand(self) -> float:
        """Points graded by hand: earned only through a person's grade."""
        return sum(c.max_score for c in self.outcome.cells if c.graded_by == BY_HAND)

    @property
    def ok(self) -> bool:
        hand_scored = any(c.score for c in self.outcome.cells if c.graded_by == BY_HAND)
        if self.expectation == "full":   # every test passes; every answer awaits a person
            return self.score == self.max_score and not hand_scored and all(
                c.needs_manual_grade for c in self.outcome.cells if c.graded_by == BY_HAND)
        if self.expectation == "zero":
            return self.outcome.score == 0
        return self.score < self.max_score

    @property
    def failed_tests(self) -> list[str]:
        return [c.grade_id for c in self.tested if c.score < c.max_score]


@dataclass
class Validation:
    assignment: str
    checks: list[Check] = field(default_factory=list)

    @property
    def mutants(self) -> list[Check]:
        return [c for c in self.checks if c.student.startswith("mutant-")]

    @property
    def variants(self) -> list[Check]:
        return [c for c in self.checks if c.student.startswith("variant-")]

    @property
    def ok(self) -> bool:
        return all(c.ok for c in self.checks)

    def summary(self) -> str:
        killed = sum(c.ok for c in self.mutants)
        passed = sum(c.ok for c in self.variants)
        lines = [f"{self.assignment}: mutants killed {killed}/{len(self.mutants)}, "
                 f"variants at full marks {passed}/{len(self.variants)}"]
        hand = max((c.by_hand for c in self.checks), default=0)
        if hand:
            lines.append(f"  (scores are the tests' part; {hand:g} more points are graded by "
                         "hand: the solution's answers must await a person, never be scored "
                         "by a machine)")
        for c in self.checks:
            mark = "ok  " if c.ok else "FAIL"
            lines.append(f"  {mark} {c.student:45s} {c.score:5g}/{c.max_score:g} "
                         f"(must be {c.expectation}) {c.description}")
            if c.student.startswith("mutant-") and c.ok:
                lines.append(f"       killed by: {', '.join(c.failed_tests)}")
        survivors = [c.student for c in self.mutants if not c.ok]
        if survivors:
            lines.append(f"  SURVIVING MUTANTS: {', '.join(survivors)}")
        return "\n".join(lines)


def _scratch_course(course: Course, assignment: str, root: Path) -> Course:
    scratch = Course.at(root)
    (scratch.source).mkdir(parents=True)
    # A jupytext assignment's notebook is written again from its script by the release.
    generated = [f"{assignment}.ipynb"] if course.script(assignment) else []
    shutil.copytree(course.source / assignment, scratch.source / assignment,
                    ignore=shutil.ignore_patterns(*generated, ".ipynb_checkpoints",
                                                  "__pycache__"))
    release(scratch, [assignment])
    return scratch


def _submit(course: Course, assignment: str, student: str,
            notebooks: dict[str, nbformat.NotebookNode]) -> None:
    folder = course.submitted / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    for name, notebook in notebooks.items():
        nbformat.write(notebook, folder / f"{name}.ipynb")


def validate(course: Course, assignment: str, jobs: int = 2,
             timeout: int = DEFAULT_TIMEOUT, only: set[str] | None = None) -> Validation:
    """Grade the solution, the release, every mutant and every variant of ``assignment``.

    ``only``: names of the catalogued implementations to grade (default: all of them).
    """
    with tempfile.TemporaryDirectory(prefix=f"validate-{assignment}-") as root:
        scratch = _scratch_course(course, assignment, Path(root))
        names = scratch.notebook_names(assignment)
        released = {n: nbformat.read(scratch.release / assignment / f"{n}.ipynb", as_version=4)
                    for n in names}
        sources = {n: nbformat.read(scratch.source / assignment / f"{n}.ipynb", as_version=4)
                   for n in names}

        def filled(code: str | None) -> dict[str, nbformat.NotebookNode]:
            return {n: fill_release(released[n], sources[n], code) for n in names}

        expectations: dict[str, tuple[str, str]] = {
            "solution": ("full", "the reference solution"),
            "release": ("zero", "the unmodified student release"),
        }
        _submit(scratch, assignment, "solution", filled(None))
        _submit(scratch, assignment, "release", released)
        catalogue: list[Implementation] = (implementations(assignment, "mutant")
                                           + implementations(assignment, "variant"))
        catalogue = [impl for impl in catalogue if only is None or impl.name in only]
        for impl in catalogue:
            _submit(scratch, assignment, impl.student_id, filled(impl.code))
            expectations[impl.student_id] = (
                "less than full" if impl.kind == "mutant" else "full", impl.description)

        outcomes = grade(scratch, [assignment], jobs=jobs, timeout=timeout)
        validation = Validation(assignment)
        for outcome in outcomes:
            expectation, description = expectations[outcome.student]
            validation.checks.append(Check(outcome.student, expectation, description, outcome))
        order = list(expectations)
        validation.checks.sort(key=lambda c: order.index(c.student))
        return validation
