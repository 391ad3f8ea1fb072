"""The sandbox: a submission cannot see the course, reach the network or outlive grading.

Each hostile submission below defines a correct ``dot_score`` that first does something it
must not be able to do, and prints what it achieved; the tests read the graded notebook.
"""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path
from unittest import mock

import nbformat
import pytest

from autograder.commands.grade import grade
from autograder.sandbox import bubblewrap
from autograder.submission.child import Run, Submission, grade_in_scratch
from tests.conftest import ASSIGNMENT, REPO, filled, make_course, submit

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("sandbox")

CORRECT_DOT = '''
def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''


def _probe(paths: list[str], port: int) -> str:
    return f'''
import os
import socket

seen = [p for p in {paths!r} if os.path.exists(p)]
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    network = "open"
except OSError:
    network = "closed"
print("PROBE seen:", seen, "network:", network)
import torch
print("THREADS", torch.get_num_threads(), os.environ.get("OMP_NUM_THREADS"))
''' + CORRECT_DOT


MEMORY_HOG = '''
try:
    hoard = bytearray(16 * 1024**3)
    print("HOG got 16 GiB")
except MemoryError:
    print("HOG refused")
''' + CORRECT_DOT

FLOOD = '''
print("x" * 20_000_000)
''' + CORRECT_DOT

BACKGROUND = '''
import subprocess

subprocess.Popen(["sleep", "4242"])
''' + CORRECT_DOT


def _printed(course, student: str) -> str:
    notebook = nbformat.read(course.autograded / student / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                             as_version=4)
    return "".join(o.get("text", "") for c in notebook.cells for o in c.get("outputs", []))


@pytest.fixture(scope="module", params=["warm", "cold"], ids=["zygote-kernels", "cold-kernels"])
def graded(request, tmp_path_factory):
    """The batch graded with kernels forked by zygotes (the default for a root grader) and
    with every kernel started cold in a sandbox of its own (the default otherwise)."""
    cold = request.param == "cold"
    if cold:
        os.environ["AUTOGRADER_COLD_KERNELS"] = "1"
    try:
        yield _grade_batch(tmp_path_factory)
    finally:
        os.environ.pop("AUTOGRADER_COLD_KERNELS", None)


def _grade_batch(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("sandbox") / "course")
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]
    submit(course, "honest", filled(course))
    # The Python environment is mounted at its own path, so its parent folders exist, but
    # nothing else of the repository (or of the course being graded) does.
    secrets = [str(course.source), str(course.gradebook_path), str(course.submitted / "honest"),
               str(course.root), str(REPO / "solutions"), str(REPO / "autograder"),
               str(REPO / "tests")]
    submit(course, "prober", filled(course, _probe(secrets, port)))
    submit(course, "hog", filled(course, MEMORY_HOG))
    submit(course, "spawner", filled(course, BACKGROUND))
    submit(course, "flooder", filled(course, FLOOD))
    outcomes = {o.student: o for o in grade(course, jobs=2, progress=False)}
    listener.close()
    return course, outcomes


def test_no_view_of_the_course_and_no_network(graded):
    course, outcomes = graded
    printed = _printed(course, "prober")
    assert "PROBE seen: [] network: closed" in printed
    assert outcomes["prober"].score == 14        # the code itself is correct


def test_kernels_share_the_cores_out(graded):
    """Two kernels at once on this machine: each computes on its share of the cores."""
    course, _ = graded
    threads = bubblewrap.Limits.threads_for(2)
    assert f"THREADS {threads} {threads}" in _printed(course, "prober")


def test_a_kernel_gets_its_share_of_the_cores():
    with mock.patch("os.cpu_count", return_value=8):
        assert [bubblewrap.Limits.threads_for(jobs) for jobs in (1, 2, 3, 8, 16)] == [8, 4, 2, 1, 1]
    with mock.patch("os.cpu_count", return_value=None):
        assert bubblewrap.Limits.threads_for(2) == 1


def test_memory_is_limited_and_the_rest_is_graded(graded):
    course, outcomes = graded
    assert "HOG refused" in _printed(course, "hog")
    assert outcomes["hog"].score == 14


def test_nothing_outlives_grading(graded):
    course, outcomes = graded
    assert outcomes["spawner"].score == 14
    # Another course may be graded on this machine meanwhile: look for this course's.
    pids = subprocess.run(["pgrep", "-f", "sleep 4242"], capture_output=True,
                          text=True).stdout.split()
    ours = [pid for pid in pids if str(course.root).encode() in _environ(pid)]
    assert not ours, "a process started by a submission outlived grading"


def _environ(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def test_honest_submission_unaffected(graded):
    _, outcomes = graded
    assert outcomes["honest"].score == 14


def test_a_flood_of_output_is_cut_and_costs_nothing(graded):
    course, outcomes = graded
    assert outcomes["flooder"].score == 14
    notebook = course.autograded / "flooder" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert notebook.stat().st_size < 2_000_000, "nbgrader's LimitOutput keeps the notebook small"


def test_honest_submission_graded_in_this_batch_as_when_graded_alone(graded, tmp_path):
    course, outcomes = graded
    alone = make_course(tmp_path / "alone")
    honest = course.submitted / "honest" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    submit(alone, "honest", nbformat.read(honest, as_version=4))
    (by_itself,) = grade(alone, jobs=1, progress=False)

    def verdicts(outcome):
        return [(c.grade_id, c.score, c.status, c.message) for c in outcome.cells]

    assert verdicts(by_itself) == verdicts(outcomes["honest"])


def test_no_kernel_or_sandbox_left_running(graded):
    course, _ = graded
    # Other test modules may be grading at the same time: look for this course's processes
    # (grading works in a scratch folder inside the course).
    left = subprocess.run(["pgrep", "-af", str(course.root)], capture_output=True,
                          text=True).stdout
    assert left.strip() == "", f"processes left by grading:\n{left}"


def test_grading_in_scratch_leaves_the_environment_as_it_was(tmp_path):
    """The sandbox's kernelspec is put first on JUPYTER_PATH only while nbgrader runs."""
    course = make_course(tmp_path / "course")
    submit(course, "student", filled(course))
    (tmp_path / "workspace").mkdir()
    before = dict(os.environ)
    outcome = grade_in_scratch(Submission(course, ASSIGNMENT, "student"),
                               Run(course.gradebook_path, timeout=60,
                                   workspace=tmp_path / "workspace", execute=False))
    assert outcome.cells, outcome
    assert dict(os.environ) == before
