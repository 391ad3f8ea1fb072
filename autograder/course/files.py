"""The course's own files and the marks its notebooks carry, named once.

An assignment's source folder (``solutions/<assignment>/``) holds its notebook, written as a
jupytext script of the same name, and two files of the grader's that are never released
nor shown: the hidden tests and, optionally, callables both sides share. Cells are marked
with nbgrader's region markers and with the course's tags.
"""

from __future__ import annotations

import hashlib
import re
import shutil
from pathlib import Path

SUITE_FILE = "hidden_tests.py"        # the hidden test cases and their references
HELPERS_FILE = "probe_helpers.py"     # optional: callables both sides share (no answers)

# nbgrader's region markers: what the release removes from a cell.
SOLUTION_MARKERS = ("### BEGIN SOLUTION", "### END SOLUTION")
HIDDEN_MARKERS = ("### BEGIN HIDDEN TESTS", "### END HIDDEN TESTS")
MARKERS = tuple(m.removeprefix("### ") for m in (*SOLUTION_MARKERS, *HIDDEN_MARKERS))
# A region, whole: (kind, body) of a solution or of hidden tests.
REGION = re.compile(r"^[ \t]*### BEGIN (SOLUTION|HIDDEN TESTS)[^\n]*\n(.*?)^[ \t]*### END \1",
                    re.M | re.S)
# A hidden-test region with its marker lines, as it is cut out of a cell.
HIDDEN_REGION = re.compile(r"^[ \t]*### BEGIN HIDDEN TESTS.*?^[ \t]*### END HIDDEN TESTS[^\n]*\n?",
                           re.M | re.S)

DEMO_TAG = "demo"     # a course cell that only demonstrates (trains, plots): not run to grade
LONG_TAG = "long"     # a test cell that trains a model: may use half the notebook's time


def has_hidden_tests(source: str) -> bool:
    """Whether a cell's source holds a hidden-test region."""
    return HIDDEN_MARKERS[0] in source


# Files derived from others that appear when a course is used, not written: Python's
# bytecode of the hidden tests, written when grading first imports them.
DERIVED = "__pycache__"


def digest(folders: list[Path], salt: str = "", pattern: str = "*") -> str:
    """A hash of the names and contents of the regular files under ``folders`` whose names
    match ``pattern``: what changes when any of them does (bytecode, :data:`DERIVED`, is
    not the course's content: grading once must not make everything look changed)."""
    hashed = hashlib.sha256(salt.encode())
    for folder in folders:
        for path in sorted(folder.rglob(pattern)):
            if DERIVED in path.relative_to(folder).parts:
                continue
            if path.is_file() and not path.is_symlink():
                hashed.update(str(path.relative_to(folder)).encode() + b"\0")
                hashed.update(path.read_bytes())
    return hashed.hexdigest()


def incoming_beside(target: Path) -> Path:
    """Where a new version of the folder ``target`` is written before it takes its place
    (:func:`swap_in`): beside it, hidden, and empty of anything an interrupted write left."""
    incoming = target.with_name(f".{target.name}.incoming")
    shutil.rmtree(incoming, ignore_errors=True)
    return incoming


def swap_in(incoming: Path, target: Path) -> None:
    """Put the folder ``incoming`` in ``target``'s place by renames: whoever reads
    ``target`` finds the old folder or the new one, whole (the old one is moved aside,
    then removed)."""
    if target.exists():
        old = target.with_name(f".{target.name}.replaced")
        shutil.rmtree(old, ignore_errors=True)
        target.rename(old)
        incoming.rename(target)
        shutil.rmtree(old)
    else:
        incoming.rename(target)
