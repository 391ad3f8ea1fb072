"""Before grading: the course's cells put back as released, whatever the student did to them."""

from __future__ import annotations

import copy
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbgrader.preprocessors import NbGraderPreprocessor
from traitlets import Unicode


class RestoreCourseCells(NbGraderPreprocessor):
    """Put the course's cells back as released, in the released order.

    Runs before nbgrader's OverwriteCells. Every cell of the released notebook comes back
    at its released position with its released metadata: test and instruction cells are
    taken from the release (OverwriteCells then restores their hidden parts), answer cells
    keep the student's code or text (and the images pasted into a written answer). A
    deleted test cell is therefore added back and runs; a moved one runs where it belongs;
    a test cell whose metadata was edited to look ungraded is graded anyway. Cells the
    student added stay, after the course cell they followed.
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
                if restored.cell_type != "code":     # images pasted into a written answer
                    restored.pop("attachments", None)
                    if mine.get("attachments"):
                        restored.attachments = mine.attachments
            cells.append(restored)
            cells.extend(extras.get(grade_id, []))
        nb.cells = cells
        return nb, resources
