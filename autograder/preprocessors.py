"""nbgrader preprocessors of the course: each one transformation of a notebook.

They are added to nbgrader's own pipelines in :mod:`autograder.nbgrader_setup`.
"""

from __future__ import annotations

import re

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade

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
