"""The exercises as students meet them in Jupyter.

A student downloads `exercises/<assignment>/`, opens the notebook in JupyterLab, replaces a
stub with code, runs the cells and reads the visible tests' verdicts; before submitting,
`nbgrader validate` (or JupyterLab's Validate button) says whether every visible test
passes. These tests do exactly that: a real JupyterLab server (the pinned one from
requirements.txt) on localhost with a random port and a token, driven through its UI in
headless Chromium, and nbgrader's validator on the released stubs and on the reference
answers.
"""

from __future__ import annotations

import ast
import importlib.util
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import jupytext
import nbformat
import pytest

from autograder.proving.fill import fill_release
from tests.conftest import ASSIGNMENT, REPO, SCREENSHOTS, stop_group

# A Jupyter server and a browser on one worker; the book's tests keep the other one busy.
pytestmark = pytest.mark.xdist_group("jupyter")

EXERCISES = sorted(p.name for p in (REPO / "exercises").iterdir() if p.is_dir())
REPO_PACKAGES = {"autograder", "attention_course", "_autograder_probe", "probe_helpers",
                 "solutions", "tests"}


def released(assignment: str) -> nbformat.NotebookNode:
    return nbformat.read(REPO / "exercises" / assignment / f"{assignment}.ipynb", as_version=4)


def answered(assignment: str) -> nbformat.NotebookNode:
    """The released notebook with every solution cell answered by the reference solution."""
    source = jupytext.read(REPO / "solutions" / assignment / f"{assignment}.py")
    return fill_release(released(assignment), source)


def student_copy(root: Path, assignment: str) -> Path:
    """What a student unzips: the released folder, as it is in `exercises/`."""
    folder = root / assignment
    shutil.copytree(REPO / "exercises" / assignment, folder,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__"))
    return folder


@pytest.mark.parametrize("assignment", EXERCISES)
def test_released_notebook_imports_only_what_a_student_has(assignment):
    """No hidden-test region, and no import of the course's own code: only the standard
    library, the packages of requirements.txt and the files shipped in the folder."""
    folder = REPO / "exercises" / assignment
    shipped = {p.stem for p in folder.glob("*.py")}
    notebook = released(assignment)
    text = json.dumps(notebook)
    assert "HIDDEN TESTS" not in text and "_autograder_probe" not in text
    for cell in notebook.cells:
        if cell.cell_type != "code":
            continue
        for node in ast.walk(ast.parse(cell.source)):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0:
                names = [node.module]
            else:
                continue
            for name in (n.split(".")[0] for n in names):
                assert name not in REPO_PACKAGES, f"{cell.metadata.get('nbgrader')}: {name}"
                assert name in shipped or name in sys.stdlib_module_names \
                    or importlib.util.find_spec(name) is not None, name


def test_nbgrader_validate_tells_a_student_before_submitting(tmp_path):
    """On the released stubs, `nbgrader validate` lists the failing test cells with their
    NotImplementedError; on the reference answers it reports success. (Its exit code is 0
    either way: the message is the verdict.)"""
    stubs = student_copy(tmp_path / "stubs", ASSIGNMENT)
    done = student_copy(tmp_path / "done", ASSIGNMENT)
    nbformat.write(answered(ASSIGNMENT), done / f"{ASSIGNMENT}.ipynb")
    runs = [subprocess.Popen([sys.executable, "-m", "nbgrader", "validate",
                              f"{ASSIGNMENT}.ipynb"], cwd=folder, text=True,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
            for folder in (stubs, done)]
    (on_stubs, _), (on_answers, _) = (run.communicate(timeout=600) for run in runs)
    test_cells = sum(bool(c.metadata.get("nbgrader", {}).get("grade"))
                     for c in released(ASSIGNMENT).cells)
    assert f"VALIDATION FAILED ON {test_cells} CELL(S)!" in on_stubs, on_stubs[-2000:]
    assert "NotImplementedError" in on_stubs
    assert "Success! Your notebook passes all the tests." in on_answers, on_answers[-2000:]


@pytest.fixture(scope="module")
def jupyterlab(tmp_path_factory):
    """JupyterLab on 127.0.0.1:<free port> with a token, serving a student's copy of the
    exercise. Its settings live in a temporary folder: every cell stays in the page
    (no windowing), and no news or update check is fetched."""
    tmp = tmp_path_factory.mktemp("jupyterlab")
    root = tmp / "root"
    student_copy(root, ASSIGNMENT)
    settings = tmp / "settings"
    for plugin, values in {
            "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification": {"checkForUpdates": False,
                                                            "fetchNews": "false"}}.items():
        path = settings / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    token = secrets.token_hex(16)
    env = dict(os.environ, JUPYTER_CONFIG_DIR=str(tmp / "config"),
               JUPYTER_RUNTIME_DIR=str(tmp / "runtime"), JUPYTERLAB_SETTINGS_DIR=str(settings),
               JUPYTERLAB_WORKSPACES_DIR=str(tmp / "workspaces"), IPYTHONDIR=str(tmp / "ipython"))
    command = [sys.executable, "-m", "jupyterlab", "--no-browser", "--ip=127.0.0.1",
               f"--port={port}", "--ServerApp.port_retries=0",
               f"--IdentityProvider.token={token}", f"--ServerApp.root_dir={root}"]
    if os.geteuid() == 0:
        command.append("--allow-root")
    log = (tmp / "server.log").open("w")
    server = subprocess.Popen(command, cwd=tmp, env=env, stdout=log, stderr=subprocess.STDOUT,
                              start_new_session=True)   # its kernels die with its group
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            assert server.poll() is None, (tmp / "server.log").read_text()[-3000:]
            assert time.monotonic() < deadline, "JupyterLab did not start"
            try:
                urllib.request.urlopen(f"{base}/api/status?token={token}", timeout=2)
                break
            except OSError:
                time.sleep(0.5)
        yield {"url": f"{base}/lab/tree/{ASSIGNMENT}/{ASSIGNMENT}.ipynb?token={token}",
               "root": root}
    finally:
        stop_group(server)
        log.close()


def test_student_answers_a_cell_in_jupyterlab_and_reads_the_tests(jupyterlab, browser):
    """Type a correct `dot_score` into its cell, run all cells: its test cell passes (no
    error output), the next one, still a stub, shows NotImplementedError. Then save and
    press nbgrader's Validate button: the dot-product test is no longer among the failures."""
    answer = next(c.source for c in answered(ASSIGNMENT).cells
                  if c.metadata.get("nbgrader", {}).get("grade_id") == "dot_score")
    context = browser.new_context(viewport={"width": 1400, "height": 900})
    page = context.new_page()
    try:
        page.goto(jupyterlab["url"])
        page.wait_for_function("document.body.innerText.includes('| Idle')", timeout=120_000)
        cells = page.locator(".jp-Notebook .jp-Cell")
        dot_cell = cells.filter(has_text="def dot_score(").first
        dot_test = cells.filter(has_text="assert_close(dot_score(example_query").first
        next_test = cells.filter(has_text="assert_close(scaled_dot_score(example_query").first

        dot_cell.locator(".cm-content").click()
        page.keyboard.press("Control+a")
        page.keyboard.insert_text(answer)
        assert "NotImplementedError" not in dot_cell.locator(".cm-content").inner_text()

        page.locator(".lm-MenuBar-item", has_text="Run").click()
        page.locator(".lm-Menu-item[data-command='runmenu:run-all']").click()
        error = "[data-mime-type='application/vnd.jupyter.stderr']"
        next_test.locator(error).filter(has_text="NotImplementedError").wait_for(
            timeout=180_000)
        assert re.fullmatch(r"\[\d+\]:", dot_test.locator(".jp-InputPrompt").inner_text())
        assert dot_test.locator(error).count() == 0, dot_test.locator(error).all_inner_texts()
        dot_test.scroll_into_view_if_needed()
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=SCREENSHOTS / "jupyterlab-attention-scoring.png")

        page.keyboard.press("Control+s")
        page.wait_for_function("!document.querySelector('.jp-mod-dirty')", timeout=30_000)
        page.locator("jp-button.validate-button").click()   # nbgrader's button
        dialog = page.locator(".jp-Dialog").filter(has_text="Validation Results")
        dialog.wait_for(timeout=180_000)
        report = dialog.inner_text()
        assert "The following cell failed:" in report and "NotImplementedError" in report
        assert "scaled_dot_score(example_query" in report
        assert "assert_close(dot_score(example_query" not in report
        page.screenshot(path=SCREENSHOTS / "jupyterlab-validate.png")
        saved = nbformat.read(jupyterlab["root"] / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", 4)
        assert any(c.source == answer for c in saved.cells), "the answer was saved"
    finally:
        context.close()
