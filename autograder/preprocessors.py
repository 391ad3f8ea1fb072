"""nbgrader preprocessors of the course: each one transformation of a notebook.

They are added to nbgrader's own pipelines in :mod:`autograder.nbgrader_setup`.
"""

from __future__ import annotations

import copy
import re

from nbclient.exceptions import DeadKernelError
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute, NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Integer

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


KERNEL_DIED = "KernelDied"


class ExecuteSurvivingCrashes(Execute):
    """nbgrader's Execute, except that a dead kernel costs only the cell that killed it.

    When the kernel dies in a cell (``os._exit``, a segfault, the memory limit), the notebook
    is run again from the start in a fresh kernel with that cell replaced by an error, so
    every other cell still runs and is graded. After ``max_kernel_deaths`` deaths, the cell
    that killed the kernel and every cell after it get the error.
    """

    max_kernel_deaths = Integer(4, help="Fresh runs allowed after a dead kernel").tag(config=True)

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None):
        pristine = copy.deepcopy(nb)
        self._fatal: set[int] = set()
        self._skip_from: int | None = None
        for deaths in range(self.max_kernel_deaths + 2):
            self._running: int | None = None
            try:
                return super().preprocess(copy.deepcopy(pristine), resources, km)
            except DeadKernelError:
                if self._running is None:
                    raise
                if deaths < self.max_kernel_deaths:
                    self._fatal.add(self._running)
                else:
                    self._skip_from = self._running
                self.log.warning("The kernel died in cell %d; running the notebook again "
                                 "without it", self._running)
        raise DeadKernelError("the kernel kept dying")

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        if index in self._fatal or (self._skip_from is not None and index >= self._skip_from):
            if cell.cell_type == "code":
                reason = ("the kernel died while running this cell (the code exited, crashed "
                          "or ran out of memory)" if index in self._fatal or
                          index == self._skip_from else "a cell before it kept killing the "
                          "kernel")
                cell.outputs = [new_output("error", ename=KERNEL_DIED, evalue=reason,
                                           traceback=[f"{KERNEL_DIED}: {reason}"])]
                cell.execution_count = None
            return cell, resources
        self._running = index
        result = super().preprocess_cell(cell, resources, index)
        self._running = None
        return result
