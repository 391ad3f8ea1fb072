"""Shared fixtures: scratch course directories built from this repository's sources."""

from __future__ import annotations

import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from autograder.course import Course
from autograder.implementations import fill_release
from autograder.release import release

REPO = Path(__file__).resolve().parent.parent
ASSIGNMENT = "attention-scoring"


def make_course(root: Path, assignments: list[str] = (ASSIGNMENT,)) -> Course:
    """A scratch course with the given assignments' sources, released."""
    course = Course.at(root)
    for assignment in assignments:
        shutil.copytree(REPO / "solutions" / assignment, course.source / assignment,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
    release(course, list(assignments))
    return course


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Course:
    """A released scratch course, shared read-only by the tests of a session."""
    return make_course(tmp_path_factory.mktemp("released"))


@pytest.fixture
def course(tmp_path) -> Course:
    """A fresh released scratch course for a test that grades or writes."""
    return make_course(tmp_path / "course")


def notebooks(course: Course, assignment: str = ASSIGNMENT) -> tuple[nbformat.NotebookNode,
                                                                    nbformat.NotebookNode]:
    """(release, source) notebooks of a one-notebook assignment."""
    release_nb = nbformat.read(course.release / assignment / f"{assignment}.ipynb", as_version=4)
    source_nb = nbformat.read(course.source / assignment / f"{assignment}.ipynb", as_version=4)
    return release_nb, source_nb


def submit(course: Course, student: str, notebook: nbformat.NotebookNode | str | None,
           assignment: str = ASSIGNMENT) -> Path:
    """Put a submission into ``submitted/<student>/<assignment>/`` (text = raw file content)."""
    folder = course.submitted / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    if isinstance(notebook, str):
        path.write_text(notebook)
    elif notebook is not None:
        nbformat.write(notebook, path)
    return path


def filled(course: Course, code: str | None = None) -> nbformat.NotebookNode:
    release_nb, source_nb = notebooks(course)
    return fill_release(release_nb, source_nb, code)


def run_cli(course: Course, *args: str, timeout: int = 900) -> subprocess.CompletedProcess:
    """Run ``python -m autograder --root COURSE ARGS`` as an instructor would."""
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(course.root), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False)


def visible_text(page: str) -> str:
    """The text of an HTML page with tags removed: highlighted code reads as written."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))
