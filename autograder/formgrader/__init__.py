"""The course's formgrader: nbgrader's formgrader, with nothing a student hands in able to
act in the grader's browser (``python -m autograder.formgrader``, ``make formgrader``)."""

from __future__ import annotations


def _jupyter_server_extension_points() -> list[dict]:
    from .app import Formgrader

    return [{"module": "autograder.formgrader", "app": Formgrader}]
