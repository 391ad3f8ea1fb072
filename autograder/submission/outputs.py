"""What a graded notebook's outputs may hold: nbgrader preprocessors run after the notebook.

nbgrader's own LimitOutput counts lines; :class:`LimitOutputSize` counts characters. nbgrader
fails a test cell that wrote to stderr; :class:`StderrIsNotAFailure` keeps that text as
ordinary output (a warning is not a failure: a test fails by raising).
"""

from __future__ import annotations

from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from nbgrader.utils import is_grade
from traitlets import Integer


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
