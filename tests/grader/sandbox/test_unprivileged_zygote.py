"""The fast path without root: an unprivileged grader's zygote forks kernels, each in a user
namespace of its own, confined as a root grader's are — and graded the same.

Run as a real local user of this machine (:mod:`tests.unprivileged`); the kernels are
the zygote's, asked to do what they must not (:mod:`.unprivileged_kernels`).
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from autograder.sandbox.inside import other_processes, process_uids
from tests.conftest import ASSIGNMENT, filled, make_course, submit
from tests.grader.sandbox.kernel_probes import WHO_IS_PID_1, environments_in_tmp, forked_by_a_zygote
from tests.unprivileged import as_instructor, instructor

pytestmark = pytest.mark.xdist_group("unprivileged")

LEFT_SLEEP = str(40_000 + os.getpid() % 20_000)


@pytest.fixture(scope="module")
def grader():
    """The unprivileged user the tests grade as: (name, uid)."""
    with instructor() as name:
        yield name, pwd.getpwnam(name).pw_uid


@pytest.fixture(scope="module")
def findings(grader):
    name, _ = grader
    run = as_instructor(name, "python", "-m", "tests.grader.sandbox.unprivileged_kernels",
                        LEFT_SLEEP, timeout=600)
    assert run.returncode == 0, run.stderr[-3000:]
    found = json.loads(run.stdout.strip().splitlines()[-1])
    assert found["zygote"], f"no zygote for an unprivileged grader:\n{run.stderr[-3000:]}"
    return found


def test_a_kernel_keeps_the_graders_uid_with_nothing_else(grader, findings):
    _, uid = grader
    seen = findings["seen"]
    assert f"uid {uid} {uid} caps 0000000000000000 0000000000000000 0000000000000000 nnp 1" \
        in seen
    assert f"limits {5 * 1024**3} 128" in seen
    assert "threads 2 2" in seen
    assert "cwd /submission marker /marker/second" in seen


def test_nothing_of_the_previous_kernel_is_left(findings):
    assert "planted" in findings["planted"]
    seen = findings["seen"]
    assert seen.startswith("False\n"), "an IPython startup file of the previous kernel ran"
    tmp = sorted([".ipython", "kernel.json", *environments_in_tmp()])
    assert f"tmp {tmp} submission []" in seen
    left = subprocess.run(["pgrep", "-f", f"sleep {LEFT_SLEEP}"], capture_output=True,
                          text=True)
    assert left.stdout.strip() == "", "the previous kernel's background process survived"


def test_a_kernel_cannot_reach_the_zygote(findings):
    """Same uid as the zygote, yet no way in: its signals are dropped (PID 1 handles none
    of them), its memory, descriptors and environment are closed (not dumpable, and no
    capability in its namespace), and no mount is the kernel's to make."""
    seen = findings["seen"]
    root = seen.split("root ", 1)[1].splitlines()[0]
    assert "agz-" not in root and "control" not in root
    assert findings["zygote"] not in seen
    for path in ("/proc/1/environ", "/proc/1/mem", "/proc/1/maps"):
        assert f"read {path} PermissionError" in seen
    assert "descriptors PermissionError" in seen
    assert "ptrace -1 1" in seen                # EPERM
    assert "mount -1 1" in seen                 # EPERM
    assert findings["zygote_alive"], "a kernel stopped the zygote"


def test_a_fork_bomb_stops_at_the_process_limit_and_leaves_nothing(grader, findings):
    _, uid = grader
    forked = int(findings["bomb"].split("forked", 1)[1])
    assert 0 < forked < 128
    assert findings["after"] == "running\n"
    # Killed with their sandbox's PID namespace when the zygote stopped; dying processes
    # may still be listed for a moment, so: none left within ten seconds.
    deadline = time.monotonic() + 10
    while (left := [pid for pid in other_processes() if uid in process_uids(pid)]) \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == [], "processes of the grader's user outlived it"


def test_an_unprivileged_grader_grades_through_zygotes(grader):
    """``grade`` run by an unprivileged user: the kernels are a zygote's (PID 1 of their
    sandbox is the zygote's program, where a cold kernel is PID 1 itself), the correct
    notebook earns full marks and a catalogued mistake loses them."""
    name, uid = grader
    root = Path(tempfile.mkdtemp(prefix="unprivileged-course-"))
    try:
        course = make_course(root / "course")
        submit(course, "correct", filled(course, WHO_IS_PID_1))
        submit(course, "mistaken", filled(course, WHO_IS_PID_1.replace("keys *", "2 * keys *")))
        shutil.chown(root, uid)
        subprocess.run(["chown", "-R", str(uid), str(root)], check=True)
        run = as_instructor(name, "python", "-m", "autograder", "--root", str(course.root),
                            "grade", ASSIGNMENT, "--jobs", "2")
        assert run.returncode == 0, run.stderr[-3000:]
        assert "cannot confine kernels" not in run.stderr, run.stderr[-3000:]
        for student in ("correct", "mistaken"):
            assert forked_by_a_zygote(course.autograded / student / ASSIGNMENT
                                      / f"{ASSIGNMENT}.ipynb"), "a kernel started cold"
        export = root / "grades.json"
        done = as_instructor(name, "python", "-m", "autograder", "--root", str(course.root),
                             "export", "--json", str(export))
        assert done.returncode == 0, done.stderr[-2000:]
        scores = {student: grades[ASSIGNMENT]["score"]
                  for student, grades in json.loads(export.read_text())["students"].items()}
        assert scores["correct"] == 14 and scores["mistaken"] < 14
    finally:
        shutil.rmtree(root, ignore_errors=True)
