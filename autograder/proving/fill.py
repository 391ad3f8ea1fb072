"""Turn an implementation written as a plain Python module into a filled-in submission.

The mutant and variant catalogues (``autograder/catalogue/<assignment>/``) hold each wrong or
alternative implementation as an ordinary ``.py`` module that defines some of the graded
functions. :func:`fill_release` answers every solution cell of the student release with
that module's definitions where it has one and with the reference solution elsewhere, so
the result is exactly what a student who wrote that code would submit.
"""

from __future__ import annotations

import ast
import re

import nbformat
from nbformat import NotebookNode

_MARKER = re.compile(r"^\s*### (BEGIN|END) SOLUTION\s*$")


def solution_text(source: str) -> str:
    """The source of a solution cell as a student would write it: markers removed."""
    return "\n".join(line for line in source.splitlines() if not _MARKER.match(line))


def defined_names(code: str) -> list[str]:
    """Names of the functions and classes defined at the top level of ``code``."""
    return [node.name for node in ast.parse(code).body
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)]


def _split_module(code: str) -> tuple[str, dict[str, str], str]:
    """Split a module into (imports, {name: definition source}, other top-level code)."""
    tree = ast.parse(code)
    lines = code.splitlines()
    imports, definitions, other = [], {}, []
    for index, node in enumerate(tree.body):
        first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", [])])
        segment = "\n".join(lines[first - 1:node.end_lineno])
        if isinstance(node, ast.Import | ast.ImportFrom):
            imports.append(segment)
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            definitions[node.name] = segment
        elif index == 0 and isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant):
            continue   # the module docstring describes the implementation; it is not code
        else:
            other.append(segment)
    return "\n".join(imports), definitions, "\n\n".join(other)


def fill_release(release: NotebookNode, source: NotebookNode,
                 implementation: str | None = None) -> NotebookNode:
    """Answer every solution cell of ``release``.

    ``source`` is the instructor's notebook (with ``### BEGIN/END SOLUTION``); cells are
    matched by nbgrader ``grade_id``. A cell whose reference solution defines a name that
    ``implementation`` also defines is replaced by the implementation's definitions, with
    its imports. The first cell replaced also receives the implementation's helpers: its
    definitions that match no cell and its other top-level code. Every other solution cell
    gets the reference solution.
    """
    filled = nbformat.from_dict(release)   # a deep copy
    solutions = {cell.metadata["nbgrader"]["grade_id"]: solution_text(cell.source)
                 for cell in source.cells if cell.metadata.get("nbgrader", {}).get("solution")
                 and cell.cell_type == "code"}
    written = {cell.metadata["nbgrader"]["grade_id"]: cell.source for cell in source.cells
               if cell.metadata.get("nbgrader", {}).get("solution")
               and cell.cell_type != "code"}       # a written answer: the model answer
    graded_names = {name for text in solutions.values() for name in defined_names(text)}
    imports, definitions, other = _split_module(implementation or "")
    helpers = [src for name, src in definitions.items() if name not in graded_names]
    helpers += [other] if other.strip() else []
    for cell in filled.cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("solution"):
            continue
        if meta["grade_id"] in written:
            cell.source = written[meta["grade_id"]]
            continue
        reference = solutions[meta["grade_id"]]
        names = [n for n in defined_names(reference) if n in definitions]
        if not names:
            cell.source = reference
            continue
        parts = [imports, *helpers, *(definitions[n] for n in names)]
        helpers = []
        cell.source = "\n\n".join(p for p in parts if p)
    return filled
