"""Building a submission from an implementation module (the catalogue's format)."""

from __future__ import annotations

from autograder.proving.fill import defined_names, fill_release, solution_text
from tests.conftest import notebooks

MODULE = '''"""Example implementation."""
import math

import torch


def _helper(x):
    return x * 2


CONSTANT = 3


def dot_score(query, keys):
    return _helper(torch.einsum("bd,bnd->bn", query, keys)) / 2 * math.sqrt(1)
'''


def _answers(notebook):
    return {c.metadata["nbgrader"]["grade_id"]: c.source for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("solution")}


def test_solution_text_removes_only_markers():
    text = "def f():\n    ### BEGIN SOLUTION\n    return 1\n    ### END SOLUTION\n"
    assert solution_text(text) == "def f():\n    return 1"
    assert defined_names(solution_text(text)) == ["f"]


def test_fill_release_with_the_solution(released):
    release_nb, source_nb = notebooks(released)
    answers = _answers(fill_release(release_nb, source_nb))
    assert "NotImplementedError" not in "".join(answers.values())
    assert "BEGIN SOLUTION" not in "".join(answers.values())


def test_fill_release_replaces_only_the_defined_functions(released):
    release_nb, source_nb = notebooks(released)
    answers = _answers(fill_release(release_nb, source_nb, MODULE))
    dot = answers["dot_score"]
    assert dot.startswith("import math\nimport torch\n")
    assert "def _helper" in dot and "CONSTANT = 3" in dot and "einsum" in dot
    assert "Example implementation" not in dot
    assert "def _helper" not in answers["scaled_dot_score"]    # helpers go in once
    assert answers["attend"] == solution_text(
        next(c.source for c in source_nb.cells
             if c.metadata.get("nbgrader", {}).get("grade_id") == "attend"))
    # The release itself is untouched.
    assert "NotImplementedError" in _answers(release_nb)["dot_score"]
