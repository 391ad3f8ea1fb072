"""nbgrader preprocessors of the course: each one transformation of a notebook.

They are added to nbgrader's own pipelines in :mod:`autograder.nbgrader_setup`.
"""

from __future__ import annotations

import copy
import json
import re
import shutil
import traceback
from pathlib import Path

import nbformat
from jsonschema import exceptions, validators
from jsonschema.protocols import Validator
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.nbgraderformat import MetadataValidator, ValidationError
from nbgrader.nbgraderformat.common import BaseMetadataValidator
from nbgrader.preprocessors import CheckCellMetadata, NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Integer, Unicode

from .suite_files import SUITE_FILE

HIDDEN_REGION = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                           re.M | re.S)
HIDDEN_PLACEHOLDER = "# (hidden tests: their code is not shown)\n"


class StderrIsNotAFailure(NbGraderPreprocessor):
    """Keep text a graded cell wrote to stderr, but as ordinary output.

    nbgrader scores a test cell 0 as soon as it printed anything on stderr, yet correct
    PyTorch code often emits warnings there. A test fails by raising; that is what counts.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if cell.cell_type == "code" and is_grade(cell):
            for output in cell.get("outputs", []):
                if output.output_type == "stream" and output.name == "stderr":
                    output.name = "stdout"
        return cell, resources


class _CompiledSchema(BaseMetadataValidator):
    """The JSON-schema step of nbgrader's validation, with the schema compiled once."""

    _compiled: dict[int, Validator] = {}      # by schema version (nbgrader's file v<N>.json)

    def validate_cell(self, cell: NotebookNode) -> None:
        metadata = cell.metadata.get("nbgrader")
        if metadata is None or metadata.get("schema_version", 0) != self.schema_version:
            super().validate_cell(cell)     # nbgrader's SchemaTooOld/TooNewError
            return
        validator = self._compiled.get(self.schema_version)
        if validator is None:
            validator = self._compiled[self.schema_version] = \
                validators.validator_for(self.schema)(self.schema)
        error = exceptions.best_match(validator.iter_errors(metadata))
        if error is not None:
            raise error


class CompiledMetadataValidator(MetadataValidator, _CompiledSchema):
    """nbgrader's cell-metadata validator, its JSON schema compiled once per process.

    nbgrader calls ``jsonschema.validate`` for every cell, which first checks the schema
    itself against the JSON Schema meta-schema (ten times the cost of the check). Here
    nbgrader's own checks run unchanged; only their schema step (next in the method
    order: ``MetadataValidator`` → ``_CompiledSchema`` → nbgrader's base) is compiled.
    The verdict and the error raised are the same (``best_match`` of the errors).
    """


class CheckCellMetadataCompiled(CheckCellMetadata):
    """nbgrader's :class:`~nbgrader.preprocessors.CheckCellMetadata` with
    :class:`CompiledMetadataValidator`."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        try:
            CompiledMetadataValidator().validate_nb(nb)
        except ValidationError:
            self.log.error(traceback.format_exc())
            message = "Notebook failed to validate; the nbgrader metadata may be corrupted."
            self.log.error(message)
            raise ValidationError(message) from None
        return nb, resources


class LimitOutputSize(NbGraderPreprocessor):
    """Cut every output to ``max_chars`` characters.

    nbgrader's LimitOutput counts lines; one enormous line (or image) would still fill the
    graded notebook, the feedback page and the disk.
    """

    max_chars = Integer(20_000, help="Characters an output may keep").tag(config=True)

    def _cut(self, text: str) -> str:
        if len(text) <= self.max_chars:
            return text
        return text[:self.max_chars] + f"\n… output cut: {len(text):,} characters in all\n"

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        for output in cell.get("outputs", []):
            if output.output_type == "stream":
                output.text = self._cut(output.text)
            elif output.output_type == "error":
                output.evalue = self._cut(output.evalue)
                output.traceback = [self._cut(line) for line in output.traceback]
            elif any(len(str(value)) > self.max_chars for value in output.get("data", {}).values()):
                size = sum(len(str(value)) for value in output.data.values())
                output.data = {"text/plain": f"… output removed: {size:,} characters"}
        return cell, resources


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden tests from a feedback notebook: their source and their tracebacks.

    A hidden region becomes a one-line placeholder. Error outputs of a cell that held
    hidden tests keep only the exception's type and message: a traceback would quote the
    hidden test's lines.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if cell.cell_type != "code" or "### BEGIN HIDDEN TESTS" not in cell.source:
            return cell, resources
        cell.source = HIDDEN_REGION.sub(HIDDEN_PLACEHOLDER, cell.source)
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                message = f"{output.ename}: {output.evalue}" if output.evalue else output.ename
                output.traceback = [message]
        return cell, resources


class RestoreCourseCells(NbGraderPreprocessor):
    """Put the course's cells back as released, in the released order.

    Runs before nbgrader's OverwriteCells. Every cell of the released notebook comes back
    at its released position with its released metadata: test and instruction cells are
    taken from the release (OverwriteCells then restores their hidden parts), answer cells
    keep the student's code. A deleted test cell is therefore added back and runs; a moved
    one runs where it belongs; a test cell whose metadata was edited to look ungraded is
    graded anyway. Cells the student added stay, after the course cell they followed.
    """

    release_root = Unicode("", help="The course's release folder").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict):
        meta = resources.get("nbgrader", {})
        template_path = Path(self.release_root) / meta.get("assignment", "") / \
            f"{meta.get('notebook', '')}.ipynb"
        if not self.release_root or not template_path.exists():
            return nb, resources
        template = nbformat.read(template_path, as_version=4)
        known = {c.metadata["nbgrader"]["grade_id"]: c for c in template.cells
                 if "grade_id" in c.metadata.get("nbgrader", {})}
        answers, extras, anchor = {}, {None: []}, None
        for cell in nb.cells:
            grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
            if grade_id in known and grade_id not in answers:
                answers[grade_id] = cell
                anchor = grade_id
                extras.setdefault(anchor, [])
            else:                       # the student's own cell (or a duplicate)
                cell.metadata.pop("nbgrader", None)
                extras.setdefault(anchor, []).append(cell)
        cells = list(extras[None])
        for grade_id, released in known.items():
            restored = copy.deepcopy(released)
            mine = answers.get(grade_id)
            if mine is not None and released.metadata["nbgrader"].get("solution") \
                    and mine.cell_type == released.cell_type:
                restored.source = mine.source
            cells.append(restored)
            cells.extend(extras.get(grade_id, []))
        nb.cells = cells
        return nb, resources


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
        from . import hidden

        folder = self.kernel_folder(resources)
        if self.sandbox_folder:
            folder.mkdir(parents=True, exist_ok=True)
            for path in Path(resources["metadata"]["path"]).iterdir():
                if path.is_file() and not path.is_symlink() and path.suffix != ".ipynb":
                    shutil.copyfile(path, folder / path.name)
        suite = self.suite(resources)
        if suite is not None:
            hidden.write_cases(suite, folder)
        return nb, resources


class JudgeHiddenTests(ShipHiddenCases):
    """After the notebook ran: turn the kernel's reports into verdicts, here.

    A test cell passes only if it raised nothing and its hidden cases' reported values
    match the references computed in this process; otherwise the cell gets an error output
    that says why, which nbgrader scores 0. Reports are removed from every cell.
    """

    def preprocess(self, nb: NotebookNode, resources: dict):
        from . import hidden, probe

        suite = self.suite(resources)
        expected = hidden.load(str(suite)) if suite is not None else {}
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
                problems = list(hidden.failures(expected[grade_id], mine[0]))
                message = hidden.summary(problems, len(expected[grade_id]))
            elif any(o.output_type == "error" for o in cell.outputs):
                continue       # the cell failed before the hidden tests reported: that error stands
            elif not mine:
                message = "the hidden tests did not report (the cell stopped before them)"
            else:
                message = "the hidden tests reported more than once (the cell was tampered with)"
            if message:
                # Every failing case, for the instructor's report (feedback shows `message`).
                details = DETAILS_PREFIX + json.dumps(problems)
                cell.outputs.append(new_output("error", ename=HIDDEN_FAILURE, evalue=message,
                                               traceback=[f"{HIDDEN_FAILURE}: {message}",
                                                          details]))
        if suite is not None and not self.sandbox_folder:
            hidden.remove_cases(self.kernel_folder(resources))
        return nb, resources


HIDDEN_FAILURE = "HiddenTestFailed"
DETAILS_PREFIX = "failing cases: "
