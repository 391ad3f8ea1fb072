"""Run an assignment's hidden cases in this process: a quick check for course authors.

Grading proper runs each notebook in a sandboxed kernel through nbgrader, which costs a few
seconds per submission (see :mod:`autograder.commands.validate`). While writing hidden tests or
catalogue entries, this module answers the same question in a fraction of that: it
executes the assignment's code cells in order (answers filled from the reference solution
or an implementation) in a plain namespace of this process — each test cell's visible
tests, then its hidden cases with the kernel-side :func:`autograder.hidden.probe.observe` — and
judges the observations with :func:`autograder.hidden.judging.failures`, as the grader does.

Only for trusted code (the solution, the catalogue): nothing here is sandboxed. Cells
tagged ``demo`` (long demonstrations, such as training a model to draw its heatmap) are
skipped, as when grading.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import tempfile
import warnings
from pathlib import Path

import jupytext
import nbformat
from nbgrader.utils import is_grade

from ..course.files import DEMO_TAG, HELPERS_FILE, HIDDEN_REGION, SUITE_FILE
from ..hidden import probe
from ..hidden.judging import Failure, failures, summary, visible_failure
from ..hidden.references import load, write_cases
from .fill import fill_release


def _source_notebook(source_dir: Path) -> nbformat.NotebookNode:
    return nbformat.from_dict(jupytext.read(source_dir / f"{source_dir.name}.py"))


def answered_notebook(source_dir: Path, implementation: str | None) -> nbformat.NotebookNode:
    """The assignment's notebook with every answer cell filled as a student would."""
    source = _source_notebook(source_dir)
    return fill_release(source, source, implementation)


def _runs_in_dry_run(cell: nbformat.NotebookNode) -> bool:
    return cell.cell_type == "code" and DEMO_TAG not in cell.metadata.get("tags", [])


def dry_run(source_dir: Path, implementation: str | None = None) -> dict[str, str | None]:
    """{grade_id: None if the test cell passes, else why not} for an implementation.

    ``source_dir`` is ``solutions/<assignment>``; ``implementation`` is a module's source
    as in the catalogue (None: the reference solution). Cells run in notebook order, as
    when grading: a test cell fails if its visible tests raise or a hidden case disagrees.
    """
    return {grade_id: summary(problems, total)
            for grade_id, (problems, total) in _dry_run(source_dir, implementation).items()}


def failing_cases(source_dir: Path, implementation: str | None = None) -> dict[str, list]:
    """{grade_id: [[case label, what is wrong, kind], ...]} (empty when the cell passes), as
    the grader records them for the instructor's report."""
    return {grade_id: [list(p) for p in problems]
            for grade_id, (problems, _) in _dry_run(source_dir, implementation).items()}


def _dry_run(source_dir: Path, implementation: str | None) -> dict[str, tuple[list, int]]:
    suite = source_dir / SUITE_FILE
    expected = load(suite)
    notebook = answered_notebook(source_dir, implementation)
    with tempfile.TemporaryDirectory(prefix="dryrun-") as folder:
        write_cases(suite, Path(folder))
        for released in source_dir.iterdir():   # data files and modules the notebook uses
            if released.is_file() and released.suffix != ".ipynb" \
                    and released.name not in (f"{source_dir.name}.py", SUITE_FILE,
                                              HELPERS_FILE):
                (Path(folder) / released.name).write_bytes(released.read_bytes())
        cases = probe_cases(Path(folder))
        with _inside(Path(folder)):
            return _run_cells(notebook, expected, cases)


def _run_cells(notebook: nbformat.NotebookNode, expected: dict,
               cases: dict) -> dict[str, tuple[list, int]]:
    """{grade_id: (failing cases, number of cases)} of every test cell, in order."""
    namespace: dict = {"__name__": "__main__"}
    verdicts: dict[str, tuple[list, int]] = {}
    for cell in filter(_runs_in_dry_run, notebook.cells):
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        problems, total = [], 0
        if is_grade(cell) and grade_id in expected:      # a test cell reports first
            problems = _failures(expected[grade_id], cases[grade_id], namespace)
            total = len(expected[grade_id])
        visible = HIDDEN_REGION.sub("", cell.source)
        code = "\n".join(line for line in visible.splitlines()
                         if not line.lstrip().startswith(("%", "!")))
        try:
            with contextlib.redirect_stdout(io.StringIO()), warnings.catch_warnings():
                warnings.simplefilter("ignore")
                exec(compile(code, f"<cell {grade_id}>", "exec"), namespace)
        except Exception as error:       # as the notebook would show it: the cell fails
            problems = [visible_failure(type(error).__name__, str(error)), *problems]
            total += 1
        if is_grade(cell):
            verdicts[grade_id] = (problems, total)
    return verdicts


def probe_cases(folder: Path) -> dict:
    import torch

    return torch.load(folder / probe.CASES_FILE, weights_only=True)


@contextlib.contextmanager
def _inside(folder: Path):
    """Work in ``folder`` with it first on ``sys.path``, as a kernel started there would."""
    before = Path.cwd()
    sys.path.insert(0, str(folder))
    importlib.invalidate_caches()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)
        sys.path.remove(str(folder))
        _forget_modules_in(folder)


def _forget_modules_in(folder: Path) -> None:
    """Drop modules imported from ``folder`` (a data module, the probe's helpers), so the
    next dry run imports its own copies."""
    for name, module in list(sys.modules.items()):
        path = getattr(module, "__file__", None) or ""
        if path.startswith(str(folder)):
            del sys.modules[name]


def _failures(expectations: list, cases: list[dict], namespace: dict) -> list[Failure]:
    observations = [{"label": case["label"], **probe.observe(case, namespace)}
                    for case in cases]
    return list(failures(expectations, {"observations": observations}))
