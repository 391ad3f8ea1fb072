"""The course layer: what every other layer agrees on, and nothing that runs code.

Where things are (:mod:`.paths`), what the course's files and notebooks are called and
marked with (:mod:`.files`), which languages a notebook is released in
(:mod:`.languages`), which folders a running grader owns (:mod:`.runtime`), and
what grading one submission produced (:mod:`.outcome`). It imports no other layer of
the grader, and nothing heavier than the standard library.
"""

from .outcome import CellResult, Outcome
from .paths import Course

__all__ = ["CellResult", "Course", "Outcome"]
