"""Kernels forked warm by a root grader's sandboxed zygote are confined like cold ones, and
one notebook's kernel leaves nothing — files, processes, startup scripts — for the next one
to meet (an unprivileged grader's: ``test_unprivileged_zygote.py``).

The rest of the suite grades through zygotes too (they are the default for a root grader);
these tests look at the kernels themselves, and at two notebooks graded one after the
other by the same zygote.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import nbformat
import pytest

from autograder.commands.grade import grade
from autograder.sandbox import bubblewrap, zygote
from tests.conftest import ASSIGNMENT, filled, make_course, submit
from tests.grader.sandbox.kernel_probes import (
    INSPECT,
    THREADS,
    environments_in_tmp,
    one_after_another,
    plant,
    run_code,
    start_kernel,
)

pytestmark = [
    pytest.mark.skipif(os.geteuid() != 0, reason="a root grader's zygotes (anyone else's: "
                       "test_unprivileged_zygote.py)"),
    pytest.mark.xdist_group("zygote"),
]

# A background process a kernel leaves is told apart by a sleep of this test run's own
# (another run of the suite may be grading on the same machine).
LEFT_SLEEP = str(60_000 + os.getpid() % 20_000)


@pytest.fixture(scope="module")
def served():
    """Two kernels of one zygote, one after the other: the first plants, the second looks."""
    z = zygote.for_this_thread()
    limits = bubblewrap.Limits(memory_bytes=5 * 1024**3, threads=5)   # not torch's default
    printed = one_after_another(z, limits, [
        ("planted", "/marker/first", plant(LEFT_SLEEP)),
        ("seen", "/marker/second", "print('PLANTED' in dir())\n" + INSPECT + THREADS)])
    yield z, printed["planted"], printed["seen"]
    zygote.stop_all()


def test_kernel_is_unprivileged_and_limited(served):
    _, planted, seen = served
    assert "planted" in planted
    uid = bubblewrap.sandbox_uid()
    assert f"uid {uid} {uid} caps 0000000000000000 0000000000000000 0000000000000000 nnp 1" \
        in seen
    assert f"limits {5 * 1024**3} 128" in seen
    assert "threads 5 5" in seen
    assert "cwd /submission marker /marker/second" in seen


def test_nothing_of_the_previous_kernel_is_left(served):
    _, _, seen = served
    assert seen.startswith("False\n"), "an IPython startup file of the previous kernel ran"
    tmp = sorted([".ipython", "kernel.json", *environments_in_tmp()])
    assert f"tmp {tmp} submission []" in seen
    left = subprocess.run(["pgrep", "-f", f"sleep {LEFT_SLEEP}"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", "the previous kernel's background process survived"


def test_the_kernel_cannot_see_the_grader_or_stop_the_zygote(served):
    z, _, seen = served
    root = seen.split("root ", 1)[1].splitlines()[0]
    assert "agz-" not in root and "control" not in root
    assert str(z.folder) not in seen
    assert zygote._RUNNING[threading.get_ident()].alive(), "the kernel stopped the zygote"


def test_a_dead_zygote_is_replaced():
    first = zygote.for_this_thread()
    zygote._RUNNING[threading.get_ident()].process.kill()
    zygote._RUNNING[threading.get_ident()].process.wait()
    second = zygote.for_this_thread()
    assert second != first and zygote._RUNNING[threading.get_ident()].alive()
    assert not first.folder.exists()
    zygote.stop_all()
    assert not second.folder.exists()


POISON = '''
import os, subprocess, sys
os.makedirs("/tmp/.ipython/profile_default/startup", exist_ok=True)
open("/tmp/.ipython/profile_default/startup/00-poison.py", "w").write(
    "import torch\\ntorch.allclose = lambda *a, **k: True\\nprint('POISONED')\\n")
open("/submission/torch.py", "w").write("print('POISONED')\\n")
subprocess.Popen([sys.executable, "-c",
                  "import time, os; time.sleep(3); open('/submission/attention.py', 'w')"
                  ".write('POISONED')"], start_new_session=True)

def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''


def test_a_poisoner_graded_first_on_one_worker_changes_nothing_for_the_next(tmp_path):
    course = make_course(tmp_path / "course")
    submit(course, "a-poisoner", filled(course, POISON))
    submit(course, "b-honest", filled(course))
    outcomes = {o.student: o for o in grade(course, jobs=1, progress=False)}
    time.sleep(4)       # long enough for the poisoner's delayed write, had it survived
    alone = make_course(tmp_path / "alone")
    submit(alone, "b-honest", filled(alone))
    (by_itself,) = grade(alone, jobs=1, progress=False)

    def verdicts(outcome):
        return [(c.grade_id, c.score, c.status, c.message) for c in outcome.cells]

    assert outcomes["b-honest"].score == 14
    assert verdicts(outcomes["b-honest"]) == verdicts(by_itself)
    graded = nbformat.read(course.autograded / "b-honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                           as_version=4)
    assert "POISONED" not in nbformat.writes(graded)


def test_the_folders_of_a_killed_graders_zygotes_are_removed():
    finished = subprocess.run(["sh", "-c", "echo $$"], capture_output=True, text=True)
    abandoned = Path(tempfile.mkdtemp(prefix=zygote.PREFIX))
    (abandoned / "owner.pid").write_text(finished.stdout.strip())
    kept = Path(tempfile.mkdtemp(prefix=zygote.PREFIX))
    (kept / "owner.pid").write_text(str(os.getpid()))
    zygote.for_this_thread()
    assert not abandoned.exists() and kept.exists()
    zygote.stop_all()
    (kept / "owner.pid").unlink()
    kept.rmdir()


def test_a_zygote_that_cannot_confine_kernels_is_not_used(monkeypatch):
    """Without the capabilities to confine a kernel (here: all dropped), the check fails
    and kernels start cold, with a warning that says why."""
    make_argv = zygote.zygote_argv

    def without_capabilities(*args):
        argv = make_argv(*args)
        return [argv[0], "--cap-drop", "ALL", *argv[1:]]

    monkeypatch.setattr(zygote, "zygote_argv", without_capabilities)
    zygote.stop_all()
    try:
        with pytest.warns(RuntimeWarning, match="cannot confine kernels(.|\n)*unshare"):
            assert zygote.for_this_thread() is None
        assert not zygote.available() and zygote._RUNNING == {}
    finally:
        zygote._BROKEN.clear()
    assert zygote.available()


def test_what_the_sandbox_mounts_below_tmp_survives_the_fresh_tmp(monkeypatch, tmp_path):
    """A repository cloned into /tmp has its Python environment there: each kernel's new,
    empty /tmp keeps such mounts, read-only, and nothing else of the zygote's /tmp."""
    (tmp_path / "kept_module.py").write_text("VALUE = 42\n")
    tmp_path.chmod(0o755)          # readable by the kernel's user, as an environment is
    make_argv = zygote.zygote_argv

    def with_a_mount_below_tmp(*args):
        argv = make_argv(*args)
        at = argv.index("--chdir")
        return [*argv[:at], "--ro-bind", str(tmp_path), "/tmp/kept/lib", *argv[at:]]

    monkeypatch.setattr(zygote, "zygote_argv", with_a_mount_below_tmp)
    zygote.stop_all()
    try:
        z = zygote.for_this_thread()
        km = start_kernel(z, bubblewrap.Limits(), "/marker")
        seen = run_code(km, '''
import os, sys
sys.path.insert(0, "/tmp/kept/lib")
import kept_module
print("value", kept_module.VALUE, sorted(os.listdir("/tmp")))
try:
    open("/tmp/kept/lib/written", "w")
except OSError as error:
    print("write:", type(error).__name__)
''')
        km.shutdown_kernel(now=True)
    finally:
        zygote.stop_all()
    assert f"value 42 {sorted(['.ipython', 'kept', 'kernel.json', *environments_in_tmp()])}" \
        in seen
    assert "write: OSError" in seen or "write: PermissionError" in seen
    assert not (tmp_path / "written").exists()


def test_prestarted_zygotes_are_claimed_by_the_workers_and_stopped_with_them():
    zygote.stop_all()
    zygote.prestart(2)
    spare = {running.zygote.folder for running in zygote._SPARE}
    claimed = []
    workers = [threading.Thread(target=lambda: claimed.append(zygote.for_this_thread()))
               for _ in range(2)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    assert len(spare) == 2 and {z.folder for z in claimed} == spare and not zygote._SPARE
    zygote.prestart(1)
    left = zygote._SPARE[0].zygote.folder
    zygote.stop_all()
    assert not any(folder.exists() for folder in [*spare, left])


def test_a_zygote_ends_when_its_grader_does_however_it_ends():
    """The zygote holds the read end of a pipe whose write end only its grader holds: when
    the grader ends (here: its end of the pipe closes, as a kill -9 would close it), the
    zygote kills whatever it started and exits, and its sandbox with it — whether or not
    a parent-death signal reached it."""
    if not zygote.available():
        pytest.skip("kernels start cold here (AUTOGRADER_COLD_START or COLD_KERNELS)")
    running = zygote.ZygoteProcess()
    try:
        assert running.zygote.works()[0]
        os.close(running._lifeline)
        running._lifeline = None
        running.process.wait(timeout=30)        # raises if the zygote stays up
    finally:
        running.stop()
