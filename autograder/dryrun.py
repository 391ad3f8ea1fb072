"""Run an assignment's hidden cases in this process: a quick check for course authors.

Grading proper runs each notebook in a sandboxed kernel through nbgrader, which costs a few
seconds per submission (see :mod:`autograder.validate`). While writing hidden tests or
catalogue entries, this module answers the same question in a fraction of that: it
executes the assignment's code cells (answers filled from the reference solution or an
implementation) in a plain namespace of this process, runs every hidden case on it with
the kernel-side :func:`autograder.probe.observe`, and judges the observations with
:func:`autograder.hidden.judge`, as the grader does.

Only for trusted code (the solution, the catalogue): nothing here is sandboxed, and the
visible tests of the notebook are not run. Cells tagged ``demo`` (long demonstrations,
such as training a model to draw its heatmap) are skipped.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import sys
import tempfile
from pathlib import Path

import jupytext
import nbformat

from . import hidden, probe
from .implementations import fill_release

DEMO_TAG = "demo"


def _source_notebook(source_dir: Path) -> nbformat.NotebookNode:
    return nbformat.from_dict(jupytext.read(source_dir / f"{source_dir.name}.py"))


def answered_notebook(source_dir: Path, implementation: str | None) -> nbformat.NotebookNode:
    """The assignment's notebook with every answer cell filled as a student would."""
    source = _source_notebook(source_dir)
    return fill_release(source, source, implementation)


def _runs_in_dry_run(cell: nbformat.NotebookNode) -> bool:
    meta = cell.metadata.get("nbgrader", {})
    return (cell.cell_type == "code" and not meta.get("grade")
            and DEMO_TAG not in cell.metadata.get("tags", []))


def dry_run(source_dir: Path, implementation: str | None = None) -> dict[str, str | None]:
    """{grade_id: None if its hidden cases pass, else why not} for an implementation.

    ``source_dir`` is ``solutions/<assignment>``; ``implementation`` is a module's source
    as in the catalogue (None: the reference solution).
    """
    suite = source_dir / hidden.SUITE_FILE
    expected = hidden.load(str(suite))
    notebook = answered_notebook(source_dir, implementation)
    with tempfile.TemporaryDirectory(prefix="dryrun-") as folder:
        hidden.write_cases(suite, Path(folder))
        for released in source_dir.iterdir():   # data files and modules the notebook uses
            if released.is_file() and released.suffix != ".ipynb" \
                    and released.name not in (f"{source_dir.name}.py", hidden.SUITE_FILE,
                                              hidden.HELPERS_FILE):
                (Path(folder) / released.name).write_bytes(released.read_bytes())
        namespace = _execute(notebook, Path(folder))
        cases = probe_cases(Path(folder))
        with _inside(Path(folder)):
            return {grade_id: _judge(expected[grade_id], cases[grade_id], namespace)
                    for grade_id in expected}


def probe_cases(folder: Path) -> dict:
    import torch

    return torch.load(folder / probe.CASES_FILE, weights_only=True)


@contextlib.contextmanager
def _inside(folder: Path):
    """Work in ``folder`` with it first on ``sys.path``, as a kernel started there would."""
    before = Path.cwd()
    sys.path.insert(0, str(folder))
    for name in (probe.HELPERS_MODULE,):
        sys.modules.pop(name, None)
    importlib.invalidate_caches()
    os.chdir(folder)
    try:
        yield
    finally:
        os.chdir(before)
        sys.path.remove(str(folder))
        sys.modules.pop(probe.HELPERS_MODULE, None)


def _execute(notebook: nbformat.NotebookNode, folder: Path) -> dict:
    namespace: dict = {"__name__": "__main__"}
    with _inside(folder), contextlib.redirect_stdout(io.StringIO()):
        for cell in notebook.cells:
            if _runs_in_dry_run(cell):
                code = "\n".join(line for line in cell.source.splitlines()
                                 if not line.lstrip().startswith(("%", "!")))
                exec(compile(code, f"<cell {cell.metadata.get('nbgrader', {}).get('grade_id')}>",
                             "exec"), namespace)
    return namespace


def _judge(expectations: list, cases: list[dict], namespace: dict) -> str | None:
    observations = [{"label": case["label"], **probe.observe(case, namespace)}
                    for case in cases]
    return hidden.judge(expectations, {"observations": observations})
