"""The student release: generated from solutions/, up to date, and giving nothing away."""

from __future__ import annotations

import json

import nbformat
import pytest

from autograder.commands.release import ReleaseLeak, assignment_secrets, check_release, code_line
from autograder.course import Course
from autograder.submission.settings import notebook_source_names
from tests.conftest import ASSIGNMENT, REPO, make_course


def _cells(path):
    notebook = nbformat.read(path, as_version=4)
    return [(c.cell_type, c.source, c.metadata.get("nbgrader")) for c in notebook.cells]


def test_committed_release_is_what_release_generates(tmp_path):
    """exercises/ is never edited by hand: it equals, byte for byte, a fresh release of
    every assignment of solutions/ (releasing is deterministic: cell ids are grade ids),
    the Chinese notebooks (<a>.zh_CN.ipynb, from locales/zh_CN/) included."""
    assignments = Course.at(REPO).assignments()
    fresh_course = make_course(tmp_path / "course", assignments)
    for assignment in assignments:
        fresh = sorted(p.name for p in (fresh_course.release / assignment).iterdir())
        committed = sorted(p.name for p in (REPO / "exercises" / assignment).iterdir())
        assert fresh == committed
        assert f"{assignment}.zh_CN.ipynb" in fresh
        for name in fresh:
            assert (fresh_course.release / assignment / name).read_bytes() == (
                REPO / "exercises" / assignment / name).read_bytes(), \
                f"run `make release` ({assignment}/{name})"


def test_release_has_no_solution_and_no_hidden_test(released):
    secrets = assignment_secrets(released, ASSIGNMENT)
    assert len(secrets) > 50           # the check has something to look for
    assert "def ref_masked_softmax(scores, mask=None):" in secrets    # hidden_tests.py too
    text = (released.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").read_text()
    for marker in ("BEGIN SOLUTION", "END SOLUTION", "BEGIN HIDDEN TESTS", "END HIDDEN TESTS"):
        assert marker not in text
    released_lines = {code_line(line) for cell in json.loads(text)["cells"]
                      for line in "".join(cell["source"]).splitlines()}
    assert not secrets & released_lines
    assert "raise NotImplementedError()" in text
    assert not list(released.release.glob("*/*.py")), "the notebook source must not be released"


def test_release_notebook_has_no_outputs(released):
    notebook = nbformat.read(released.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    for cell in notebook.cells:
        if cell.cell_type == "code":
            assert cell.outputs == [] and cell.execution_count is None


def test_check_release_catches_a_leak(course):
    path = course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    notebook = nbformat.read(path, as_version=4)
    answer = next(c for c in notebook.cells if c.metadata.get("nbgrader", {}).get("solution"))
    answer.source += "\n    return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)"
    nbformat.write(notebook, path)
    with pytest.raises(ReleaseLeak):
        check_release(course, ASSIGNMENT)


def test_check_release_catches_a_leaked_reference(course):
    path = course.release / ASSIGNMENT / "notes.py"
    path.write_text("def ref_masked_softmax(scores, mask=None):\n    pass\n")
    with pytest.raises(ReleaseLeak):
        check_release(course, ASSIGNMENT)


def test_notebook_sources_are_excluded_from_the_release():
    assert f"{ASSIGNMENT}.py" in notebook_source_names(REPO)


def test_short_common_lines_leak_only_as_part_of_a_block():
    from autograder.commands.release import find_leaks

    secrets = {"loss.backward()", "optimizer.step()", "optimizer.zero_grad()",
               "logits = self.out(torch.cat([s, c, e], dim=-1))"}
    a_book_loop = ["for batch in batches:", "    loss = model(batch)",
                   "    loss.backward()", "    # one step", "    clip(model)",
                   "    optimizer.step()"]
    assert find_leaks(secrets, a_book_loop) == []
    copied = ["optimizer.zero_grad()", "loss.backward()  # from the solution"]
    assert find_leaks(secrets, copied) == ["loss.backward()", "optimizer.zero_grad()"]
    assert find_leaks(secrets, ["x = 1", "logits = self.out(torch.cat([s, c, e], dim=-1))"]) \
        == ["logits = self.out(torch.cat([s, c, e], dim=-1))"]


def test_inline_code_of_the_instructions_is_public():
    from autograder.commands.release import public_lines

    source = nbformat.v4.new_notebook(cells=[
        nbformat.v4.new_markdown_cell("1. `optimizer.zero_grad()`;\n2. then `loss.backward()`"),
        nbformat.v4.new_code_cell("x = 1\n### BEGIN SOLUTION\ny = secret()\n### END SOLUTION")])
    shown = public_lines(source)
    assert {"optimizer.zero_grad()", "loss.backward()", "x = 1"} <= shown
    assert "y = secret()" not in shown
