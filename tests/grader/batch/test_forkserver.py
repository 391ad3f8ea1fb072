"""Grading processes forked warm, or started cold: same interface, same isolation; the
fork server, started before the batch is known, rehearses it once it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.batch.forkserver import GradingProcess
from autograder.batch.recorder import snapshot_gradebook
from autograder.course.files import SUITE_FILE
from autograder.course.outcome import NOT_RUN
from autograder.submission.child import rehearse
from tests.conftest import ASSIGNMENT, REPO


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_failing_worker_reports_its_exit_code_and_message(tmp_path, warm):
    log = tmp_path / "grading.log"
    process = GradingProcess(["--student", "s"], tmp_path, log, warm=warm)
    assert process.wait(timeout=120) == 2
    process.kill()
    assert "the following arguments are required: --root" in log.read_text()


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_kill_ends_a_running_grading_and_reaps_it(tmp_path, warm):
    process = GradingProcess(["--student", "s"], tmp_path, tmp_path / "grading.log", warm=warm)
    process.kill()
    assert not os.path.exists(f"/proc/{process.pid}")


def _loaded(path: str) -> None:
    """Runs in a child of the fork server: the suites whose references it inherited."""
    from autograder.hidden.references import loaded_suites

    Path(path).write_text(json.dumps(loaded_suites()))


_EARLY_SERVER = """
import sys, time
from pathlib import Path
from autograder.batch import forkserver
from autograder.batch.recorder import snapshot_gradebook
from autograder.course import Course

course, out = Course.at(sys.argv[1]), sys.argv[2]
forkserver.start_server()         # as the command line does, before it knows the batch
log = forkserver.server_log()
while "waiting for the batch" not in (log.read_text() if log.exists() else ""):
    time.sleep(0.05)              # the server has imported everything and waits
snapshot = snapshot_gradebook(course, Path(out).with_suffix(".db"))
forkserver.prepare(course.root, ["attention-scoring"], snapshot)
child = forkserver._context().Process(
    target=__import__("tests.grader.batch.test_forkserver").grader.batch.test_forkserver._loaded,
    args=(out,))
child.start()
child.join()
Path(out).with_suffix(".log").write_text(log.read_text())
"""


def test_a_server_started_before_the_batch_is_known_rehearses_it(released, tmp_path):
    out = tmp_path / "loaded.json"
    subprocess.run([sys.executable, "-c", _EARLY_SERVER, str(released.root), str(out)],
                   cwd=REPO, check=True, timeout=300)
    suite = released.source / ASSIGNMENT / SUITE_FILE
    assert json.loads(out.read_text()) == [str(suite.resolve())]
    log = out.with_suffix(".log").read_text()
    assert "waiting for the batch" in log and f"rehearsed {ASSIGNMENT} in" in log, log


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_rehearsal_runs_nothing_and_changes_nothing(course, tmp_path):
    snapshot = snapshot_gradebook(course, tmp_path / "snapshot.db")
    before, environment = _tree(course.root), dict(os.environ)
    outcome = rehearse(course, ASSIGNMENT, snapshot)
    # No test ran; the written answers, as released, are unanswered (nbgrader's 0).
    tests = [cell for cell in outcome.cells if cell.graded_by == "tests"]
    assert tests and {cell.status for cell in tests} == {NOT_RUN}
    assert all(cell.score == 0 for cell in outcome.cells)
    assert _tree(course.root) == before
    assert dict(os.environ) == environment


def test_importing_the_preload_elsewhere_keeps_the_exit_status():
    """Only the fork server skips its teardown (os._exit); any other importer exits as usual."""
    done = subprocess.run([sys.executable, "-c",
                           "import autograder.batch.preload; raise SystemExit(3)"],
                          cwd=REPO, timeout=300, check=False)
    assert done.returncode == 3
