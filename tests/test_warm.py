"""Grading processes forked warm, or started cold: same interface, same isolation; the
fork server, started before the batch is known, rehearses it once it is."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from autograder.grading import snapshot_gradebook
from autograder.outcome import NOT_RUN
from autograder.warm import GradingProcess
from autograder.worker import rehearse

from .conftest import ASSIGNMENT, REPO


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_failing_worker_reports_its_exit_code_and_message(tmp_path, warm):
    log = tmp_path / "worker.log"
    process = GradingProcess(["--student", "s"], tmp_path, log, warm=warm)
    assert process.wait(timeout=120) == 2
    process.kill()
    assert "the following arguments are required: --root" in log.read_text()


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_kill_ends_a_running_grading_and_reaps_it(tmp_path, warm):
    process = GradingProcess(["--student", "s"], tmp_path, tmp_path / "worker.log", warm=warm)
    process.kill()
    assert not os.path.exists(f"/proc/{process.pid}")


def _rehearsed(path: str) -> None:
    """Runs in a child of the fork server: what the server rehearsed before forking it."""
    from autograder import warmup

    Path(path).write_text(json.dumps(warmup.REHEARSED))


_EARLY_SERVER = """
import sys, time
from pathlib import Path
from autograder import grading, warm
from autograder.course import Course

course, out = Course.at(sys.argv[1]), sys.argv[2]
warm.start_server()               # as the command line does, before it knows the batch
while not warm._batch_description().with_suffix(".waiting").exists():
    time.sleep(0.05)              # the server has imported everything and waits
snapshot = grading.snapshot_gradebook(course, Path(out).with_suffix(".db"))
warm.prepare(course.root, ["attention-scoring"], snapshot)
child = warm._context().Process(target=__import__("tests.test_warm").test_warm._rehearsed,
                                args=(out,))
child.start()
child.join()
"""


def test_a_server_started_before_the_batch_is_known_rehearses_it(released, tmp_path):
    out = tmp_path / "rehearsed.json"
    subprocess.run([sys.executable, "-c", _EARLY_SERVER, str(released.root), str(out)],
                   cwd=REPO, check=True, timeout=300)
    assert json.loads(out.read_text()) == [ASSIGNMENT]


def _tree(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_rehearsal_runs_nothing_and_changes_nothing(course, tmp_path):
    snapshot = snapshot_gradebook(course, tmp_path / "snapshot.db")
    before, environment = _tree(course.root), dict(os.environ)
    outcome = rehearse(course, ASSIGNMENT, snapshot)
    assert outcome.cells and {cell.status for cell in outcome.cells} == {NOT_RUN}
    assert _tree(course.root) == before
    assert dict(os.environ) == environment


def test_importing_the_preload_elsewhere_keeps_the_exit_status():
    """Only the fork server skips its teardown (os._exit); any other importer exits as usual."""
    done = subprocess.run([sys.executable, "-c", "import autograder.warmup; raise SystemExit(3)"],
                          cwd=REPO, timeout=300, check=False)
    assert done.returncode == 3
