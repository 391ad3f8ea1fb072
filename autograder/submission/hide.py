"""Feedback never shows hidden tests: neither their source nor their tracebacks."""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor

from ..course.files import HIDDEN_REGION, has_hidden_tests

HIDDEN_PLACEHOLDER = "# (hidden tests: their code is not shown)\n"


class HideHiddenTests(NbGraderPreprocessor):
    """Remove hidden tests from a feedback notebook: their source and their tracebacks.

    A hidden region becomes a one-line placeholder. Error outputs of a cell that held
    hidden tests keep only the exception's type and message: a traceback would quote the
    hidden test's lines.
    """

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if cell.cell_type != "code" or not has_hidden_tests(cell.source):
            return cell, resources
        cell.source = HIDDEN_REGION.sub(HIDDEN_PLACEHOLDER, cell.source)
        for output in cell.get("outputs", []):
            if output.output_type == "error":
                message = f"{output.ename}: {output.evalue}" if output.evalue else output.ename
                output.traceback = [message]
        return cell, resources
