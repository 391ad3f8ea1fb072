"""A course to grade by hand in a browser, and the formgrader server that serves it.

An ordinary nbgrader assignment of one notebook (``short-answer``): an answer in code, a
test of it (1 point) and a written answer graded by hand (3 points), as nbgrader's Create
Assignment panel writes them; :func:`make_short_answer_course` releases it in a scratch
course with this repository's ``nbgrader_config.py``. :func:`serve` starts a formgrader on
a free port — `make formgrader` (the course's), or any command — and yields the URL it
printed. Used by tests/grader/commands/test_formgrader.py and tests/grader/display/.
"""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from autograder.course import Course
from tests.conftest import REPO, run_cli, stop_group

NAME = "short-answer"          # the assignment and its one notebook
ESSAY = "why-linear"           # the written answer graded by hand, 3 points
ANSWER = "double"              # the code answer
TEST = "test-double"           # its test, 1 point


def _meta(grade_id: str, **flags) -> dict:
    """nbgrader's cell metadata as its Create Assignment panel writes it."""
    return {"nbgrader": {"grade": False, "solution": False, "locked": False,
                         "schema_version": 3, "grade_id": grade_id, **flags}}


def source_notebook() -> nbformat.NotebookNode:
    """The instructor's notebook: one autograded test (1 point), one written answer (3)."""
    notebook = new_notebook(cells=[
        new_markdown_cell("# Doubling\nWrite `double(x)`.", metadata=_meta("intro", locked=True)),
        new_code_cell("def double(x):\n    ### BEGIN SOLUTION\n    return 2 * x\n"
                      "    ### END SOLUTION", metadata=_meta(ANSWER, solution=True)),
        new_code_cell("assert double(2) == 4", metadata=_meta(TEST, grade=True,
                                                               locked=True, points=1)),
        new_markdown_cell("Why is `double` a linear map? Answer in a sentence.",
                          metadata=_meta("question", locked=True)),
        new_markdown_cell("Model answer: it is additive and homogeneous, "
                          "double(a x + b y) = a double(x) + b double(y).",
                          metadata=_meta(ESSAY, grade=True, solution=True, points=3)),
    ], metadata={"kernelspec": {"name": "python3", "display_name": "Python 3",
                                "language": "python"}})
    for cell in notebook.cells:
        cell.id = cell.metadata["nbgrader"]["grade_id"]
    return notebook


def check(result: subprocess.CompletedProcess) -> subprocess.CompletedProcess:
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-3000:]
    return result


def make_short_answer_course(root: Path) -> Course:
    """A released scratch course of the ``short-answer`` assignment, configured by this
    repository's ``nbgrader_config.py`` (as `make formgrader` needs)."""
    course = Course.at(root)
    (course.source / NAME).mkdir(parents=True)
    nbformat.write(source_notebook(), course.source / NAME / f"{NAME}.ipynb")
    shutil.copy(REPO / "nbgrader_config.py", course.root / "nbgrader_config.py")
    check(run_cli(course, "release", NAME))
    return course


def released_notebook(course: Course) -> nbformat.NotebookNode:
    return nbformat.read(course.release / NAME / f"{NAME}.ipynb", as_version=4)


def submit(course: Course, student: str, notebook: nbformat.NotebookNode) -> Path:
    folder = course.submitted / student / NAME
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{NAME}.ipynb"
    nbformat.write(notebook, path)
    return path


def answered(course: Course, code: str, essay: str) -> nbformat.NotebookNode:
    """The released notebook with ``code`` as the body of ``double`` and ``essay`` as the
    written answer."""
    notebook = released_notebook(course)
    for cell in notebook.cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id == ANSWER:
            cell.source = "def double(x):\n    return " + code
        elif grade_id == ESSAY:
            cell.source = essay
    return notebook


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def make_formgrader(course: Course) -> list[str]:
    """The Makefile's own recipe for ``course``: `make formgrader` (``-o`` keeps make from
    reinstalling .venv; BIN is this Python's)."""
    return ["make", "--no-print-directory", "-s", "-C", str(REPO), "-o", ".venv/.installed",
            "formgrader", f"COURSE_ROOT={course.root}", f"FORMGRADER_PORT={free_port()}",
            f"BIN={Path(sys.executable).parent}"]


@contextlib.contextmanager
def serve(command: list[str], tmp: Path, cwd: Path | None = None,
          printed: str = r"http://127\.0\.0\.1:\d+/formgrader\?token=\w+") -> Iterator[dict]:
    """Run ``command`` (a formgrader server; Jupyter's own files in ``tmp``) until the URL
    it prints (``printed``) answers; yield ``{"url": …, "log": path}``; stop it."""
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env.update(JUPYTER_CONFIG_DIR=str(tmp / "config"), JUPYTER_RUNTIME_DIR=str(tmp / "runtime"),
               JUPYTER_DATA_DIR=str(tmp / "data"),
               JUPYTERLAB_SETTINGS_DIR=str(tmp / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"), IPYTHONDIR=str(tmp / "ipython"))
    log_path = tmp / "server.log"
    url = re.compile(printed)
    with log_path.open("w") as log:
        server = subprocess.Popen(command, env=env, cwd=cwd, stdout=log,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                  start_new_session=True)
        try:
            deadline = time.monotonic() + 180
            while True:
                assert server.poll() is None, log_path.read_text()[-3000:]
                assert time.monotonic() < deadline, "no formgrader: " + log_path.read_text()[-3000:]
                found = url.search(log_path.read_text())
                if found:
                    try:       # the URL is printed once the server listens; it answers
                        urllib.request.urlopen(found.group(0).replace("/formgrader?",
                                                                      "/api/status?"), timeout=5)
                        break
                    except OSError:
                        pass
                time.sleep(0.2)
            yield {"url": found.group(0), "log": log_path}
        finally:
            stop_group(server)


def wait_until(page, predicate: str, timeout_ms: int = 120_000) -> None:
    """Wait until the JavaScript function ``predicate`` is true in ``page``. (Playwright's
    wait_for_function polls with eval, which the formgrader's Content-Security-Policy
    refuses; page.evaluate is not subject to it.)"""
    deadline = time.monotonic() + timeout_ms / 1000
    while not page.evaluate(predicate):
        assert time.monotonic() < deadline, f"never true: {predicate}"
        page.wait_for_timeout(50)
