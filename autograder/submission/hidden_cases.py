"""The hidden tests around a notebook's run: inputs shipped before it, reports judged after.

nbgrader runs these preprocessors on either side of executing the notebook (see
:mod:`.settings`); the judging itself is :mod:`autograder.hidden.judging`'s, in this process.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Unicode

from ..course.files import SUITE_FILE
from ..hidden import probe
from ..hidden.judging import failures, summary
from ..hidden.references import load, remove_cases, write_cases
from .verdicts import hidden_failure, log_failures


class ShipHiddenCases(NbGraderPreprocessor):
    """Before the notebook runs: prepare the folder its kernel works in.

    Without a sandbox, the kernel works in the notebook's own folder. With one
    (``sandbox_folder``), it works in a separate folder: the regular files of the
    notebook's folder (data, modules) are copied there, and nothing the kernel leaves in
    it — links, pipes, files — is ever read or written by the grader, which keeps writing
    the graded notebook to the notebook's folder. Either way the probe and the hidden
    cases' inputs are put into the kernel's folder.
    """

    suite_root = Unicode("", help="Folder holding <assignment>/hidden_tests.py").tag(
        config=True)
    sandbox_folder = Unicode("", help="The folder the sandboxed kernel sees as its own "
                             "(empty: the notebook's folder)").tag(config=True)

    def suite(self, resources: dict) -> Path | None:
        assignment = resources.get("nbgrader", {}).get("assignment", "")
        path = Path(self.suite_root) / assignment / SUITE_FILE
        return path if self.suite_root and path.exists() else None

    def kernel_folder(self, resources: dict) -> Path:
        return Path(self.sandbox_folder or resources["metadata"]["path"])

    def preprocess(self, nb: NotebookNode, resources: dict):
        folder = self.kernel_folder(resources)
        if self.sandbox_folder:
            folder.mkdir(parents=True, exist_ok=True)
            for path in Path(resources["metadata"]["path"]).iterdir():
                if path.is_file() and not path.is_symlink() and path.suffix != ".ipynb":
                    shutil.copyfile(path, folder / path.name)
        suite = self.suite(resources)
        if suite is not None:
            write_cases(suite, folder)
        return nb, resources




class JudgeHiddenTests(ShipHiddenCases):
    """After the notebook ran: turn the kernel's reports into verdicts, here.

    A test cell passes only if it raised nothing and its hidden cases' reported values
    match the references computed in this process; otherwise the cell gets an error output
    that says why (:func:`.verdicts.hidden_failure`), which nbgrader scores 0, and every
    failing case goes to ``verdicts_file`` for the instructor. Reports are removed from
    every cell.
    """

    verdicts_file = Unicode("", help="File to log every failing hidden case to (empty: "
                            "none)").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        suite = self.suite(resources)
        expected = load(suite) if suite is not None else {}
        notebook = resources.get("nbgrader", {}).get("notebook", "")
        for cell in nb.cells:
            if cell.cell_type != "code":
                continue
            reports = [o for o in cell.get("outputs", []) if probe.MIME in o.get("data", {})]
            cell.outputs = [o for o in cell.get("outputs", []) if o not in reports]
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if not is_grade(cell) or grade_id not in expected:
                continue
            if cell.get("execution_count") is None:
                continue       # timed out or not run: that verdict stands
            mine = [o.data[probe.MIME] for o in reports
                    if isinstance(o.data[probe.MIME], dict)
                    and o.data[probe.MIME].get("grade_id") == grade_id]
            problems = []
            if len(mine) == 1:
                # Judged even when the visible tests failed (their error is the verdict
                # then): the failing cases are listed for the instructor's report.
                problems = list(failures(expected[grade_id], mine[0]))
                message = summary(problems, len(expected[grade_id]))
            elif any(o.output_type == "error" for o in cell.outputs):
                continue       # the cell failed before the hidden tests reported: that error stands
            elif not mine:
                message = "the hidden tests did not report (the cell stopped before them)"
            else:
                message = "the hidden tests reported more than once (the cell was tampered with)"
            if message:
                cell.outputs.append(hidden_failure(message))
                if self.verdicts_file and problems:
                    log_failures(Path(self.verdicts_file), notebook, grade_id, problems)
        if suite is not None and not self.sandbox_folder:
            remove_cases(self.kernel_folder(resources))
        return nb, resources
