"""The catalogue of implementations every assignment's tests are proven against.

``autograder/proving/mutants_and_variants/<assignment>/mutants/*.py`` are plausible wrong
implementations (*mutants*: each must lose marks): each defines the graded functions it gets
wrong, and its docstring's first line names the mistake. ``variants/*.py`` are correct
implementations written in other styles (*variants*: each must earn full marks). Whatever a
module does not define is taken from the reference solution (see :mod:`.fill`). The same two
words name the implementations written apart from the solution, from the contract alone, in
``tests/independent/<assignment>/{mutants,variants}/``.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

CATALOGUE = Path(__file__).parent / "mutants_and_variants"


@dataclass(frozen=True)
class Implementation:
    """One catalogued implementation of an assignment."""

    assignment: str
    kind: str          # "mutant" or "variant"
    name: str
    path: Path

    @property
    def code(self) -> str:
        return self.path.read_text()

    @property
    def description(self) -> str:
        """The first line of the module's docstring."""
        doc = ast.get_docstring(ast.parse(self.code)) or self.name
        return doc.strip().splitlines()[0]

    @property
    def student_id(self) -> str:
        """A student id for grading this implementation as a submission."""
        return f"{self.kind}-{self.name}"


def implementations(assignment: str, kind: str) -> list[Implementation]:
    """The catalogued ``kind`` ("mutant" or "variant") implementations of ``assignment``."""
    folder = CATALOGUE / assignment / f"{kind}s"
    return [Implementation(assignment, kind, p.stem, p) for p in sorted(folder.glob("*.py"))]
