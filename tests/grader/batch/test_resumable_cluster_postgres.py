"""Grading a whole class: resumable, on a Dask cluster, with a PostgreSQL gradebook.

* Killing ``grade`` at any moment and starting it again finishes the batch: nothing is
  lost, nothing is recorded twice, and only what was not finished is graded again
  (``--force`` grades everything).
* ``--scheduler`` grades on an existing Dask cluster (here a local one with two workers
  that the test starts, as an instructor would start one on a cluster).
* ``--db`` keeps the gradebook in a real PostgreSQL server, which the test installs
  (``make postgres-tools``) and starts on localhost.
"""

from __future__ import annotations

import json
import os
import pwd
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from glob import glob
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash

from autograder.commands.release import release
from autograder.course import Course
from autograder.course.outcome import OUTCOME_FILE
from tests.conftest import ASSIGNMENT, REPO, filled, make_course, run_cli, submit

# The module's tests share a PostgreSQL server and a Dask cluster: one worker runs them.
pytestmark = pytest.mark.xdist_group("scaling")

WRONG_DOT = "def dot_score(query, keys):\n    return keys.sum(-1)\n"


def _submit_batch(course: Course, count: int) -> dict[str, float]:
    """``count`` submissions, alternately correct and wrong in dot_score; {student: score}."""
    expected = {}
    for i in range(count):
        student = f"student-{i:02d}"
        correct = i % 2 == 0
        submit(course, student, filled(course, None if correct else WRONG_DOT))
        expected[student] = 14.0 if correct else None     # wrong: less than full
    return expected


def _graded_count(output: str) -> int:
    return int(re.search(r"graded (\d+) submission", output).group(1))


def _recorded(course: Course) -> dict[str, float]:
    with Gradebook(course.db_url) as gb:
        return {s.student.id: s.score for s in gb.assignment_submissions(ASSIGNMENT)}


def test_killed_grading_resumes_where_it_stopped(tmp_path):
    course = make_course(tmp_path / "course")
    expected = _submit_batch(course, 6)
    process = subprocess.Popen(
        [sys.executable, "-m", "autograder", "--root", str(course.root), "grade", ASSIGNMENT,
         "--jobs", "2"], cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
        start_new_session=True)

    def reports() -> list[Path]:
        return list(course.autograded.glob(f"*/{ASSIGNMENT}/{OUTCOME_FILE}"))

    deadline = time.monotonic() + 600
    while len(reports()) < 2 and time.monotonic() < deadline and process.poll() is None:
        time.sleep(0.2)
    os.killpg(process.pid, signal.SIGKILL)            # the whole job, as `kill -9` would
    process.wait()
    finished = len(reports())
    assert 2 <= finished < 6, f"{finished} submissions were finished when the grader was killed"

    result = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    assert _graded_count(result.stdout) == 6 - finished, result.stdout
    recorded = _recorded(course)
    assert sorted(recorded) == sorted(expected), "every student recorded exactly once"
    for student, score in recorded.items():
        assert score == 14.0 if expected[student] else score < 14.0, (student, score)
    assert not list(course.root.glob(".grading-*")), "the killed batch's scratch was cleared"

    again = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2")
    assert _graded_count(again.stdout) == 0, "nothing left to grade"
    forced = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2", "--force")
    assert _graded_count(forced.stdout) == 6
    assert _recorded(course) == recorded


def test_a_changed_submission_is_graded_again(tmp_path):
    course = make_course(tmp_path / "course")
    submit(course, "student", filled(course, WRONG_DOT))
    first = run_cli(course, "grade", ASSIGNMENT)
    assert _graded_count(first.stdout) == 1 and _recorded(course)["student"] < 14
    submit(course, "student", filled(course))          # a corrected resubmission
    second = run_cli(course, "grade", ASSIGNMENT)
    assert _graded_count(second.stdout) == 1 and _recorded(course)["student"] == 14


def test_feedback_and_report_do_not_make_graded_work_look_new(tmp_path):
    """Writing feedback imports the hidden tests to diagnose a failing submission, and
    Python writes their bytecode beside them (solutions/<a>/__pycache__/): that is no
    change of the assignment, and grading again grades nothing."""
    import os

    course = make_course(tmp_path / "course")
    submit(course, "student", filled(course, WRONG_DOT))
    # As on an instructor's machine: Python writes bytecode (this test machine says not to).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    assert _graded_count(run_cli(course, "grade", ASSIGNMENT, env=env).stdout) == 1
    assert run_cli(course, "feedback", ASSIGNMENT, env=env).returncode == 0
    assert run_cli(course, "report", ASSIGNMENT, env=env).returncode == 0
    assert list((course.source / ASSIGNMENT).glob("__pycache__/*.pyc"))
    assert _graded_count(run_cli(course, "grade", ASSIGNMENT, env=env).stdout) == 0


@pytest.fixture(scope="module")
def dask_scheduler():
    """An existing Dask cluster, started apart from the grader, as on a real cluster."""
    from distributed import LocalCluster

    cluster = LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                           dashboard_address=None)
    yield cluster.scheduler_address
    cluster.close()


def test_grading_on_an_existing_dask_cluster(tmp_path, dask_scheduler):
    course = make_course(tmp_path / "course")
    expected = _submit_batch(course, 3)
    result = run_cli(course, "grade", ASSIGNMENT, "--scheduler", dask_scheduler)
    assert result.returncode == 0, result.stderr[-2000:]
    recorded = _recorded(course)
    assert sorted(recorded) == sorted(expected)
    assert [recorded[s] == 14.0 for s in sorted(expected)] == [True, False, True]


def _transitions(scheduler: str) -> int:
    """How many task transitions the Dask scheduler at ``scheduler`` has made."""
    from distributed import Client

    with Client(scheduler, timeout=30) as client:
        return client.run_on_scheduler(lambda dask_scheduler: dask_scheduler.transition_counter)


def test_the_hub_service_grades_on_an_existing_dask_cluster(tmp_path, dask_scheduler):
    """``serve --scheduler``: what arrives in the exchange is graded by the cluster's
    workers (as on Kubernetes, hub/kubernetes/), and its feedback released."""
    course = make_course(tmp_path / "course")
    exchange = tmp_path / "exchange"
    me = pwd.getpwuid(os.geteuid()).pw_name
    handed_in = exchange / "attention-nlp" / "inbound" / \
        f"{me}+{ASSIGNMENT}+2026-11-29 12:00:00.000000 UTC+abcdef"
    handed_in.mkdir(parents=True)
    nbformat.write(filled(course), handed_in / f"{ASSIGNMENT}.ipynb")
    (handed_in / "timestamp.txt").write_text("2026-11-29 12:00:00.000000 UTC")
    (handed_in / "submission_secret.txt").write_text("a secret only this student knows")
    before = _transitions(dask_scheduler)
    result = run_cli(course, "--exchange", str(exchange), "serve", ASSIGNMENT, "--once",
                     "--scheduler", dask_scheduler)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    # every test passed (14 points); the written answers (4) wait for a person
    assert f"graded: {me} {ASSIGNMENT} 14 / 18" in result.stdout, result.stdout[-2000:]
    assert _transitions(dask_scheduler) > before, "the cluster graded nothing"
    name = notebook_hash(secret="a secret only this student knows", notebook_id=ASSIGNMENT)
    assert (exchange / "attention-nlp" / "feedback" / f"{name}.html").is_file()


# --------------------------------------------------------------------------- PostgreSQL


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def postgres():
    """A PostgreSQL server of its own on localhost; yields a database URL."""
    binaries = sorted(glob("/usr/lib/postgresql/*/bin"))
    if not binaries:
        pytest.fail("PostgreSQL is not installed: `make postgres-tools` installs it")
    bindir = Path(binaries[-1])
    # Not under pytest's temporary folder: the server's user could not enter it.
    folder = Path(tempfile.mkdtemp(prefix="autograder-postgres-"))
    run_as = []
    if os.geteuid() == 0:          # the server refuses to run as root
        user = pwd.getpwnam("postgres")
        shutil.chown(folder, user.pw_uid, user.pw_gid)
        run_as = ["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                  "--clear-groups"]
    data, port = folder / "data", _free_port()
    subprocess.run([*run_as, str(bindir / "initdb"), "-D", str(data), "-U", "grader",
                    "--auth=trust", "-E", "UTF8"], check=True, capture_output=True)
    subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-w", "-l",
                    str(folder / "server.log"), "-o",
                    f"-p {port} -k {folder} -c listen_addresses=127.0.0.1", "start"],
                   check=True, capture_output=True)
    try:
        subprocess.run([str(bindir / "createdb"), "-h", "127.0.0.1", "-p", str(port),
                        "-U", "grader", "course"], check=True, capture_output=True)
        yield f"postgresql://grader@127.0.0.1:{port}/course"
    finally:
        subprocess.run([*run_as, str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate",
                        "stop"], capture_output=True)
        shutil.rmtree(folder, ignore_errors=True)


def test_the_whole_pipeline_with_a_postgresql_gradebook(tmp_path, postgres):
    course = Course.at(tmp_path / "course", db=postgres)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, course.source / ASSIGNMENT,
                    ignore=shutil.ignore_patterns("*.ipynb"))
    release(course, [ASSIGNMENT])
    expected = _submit_batch(course, 3)
    result = run_cli(course, "--db", postgres, "grade", ASSIGNMENT, "--jobs", "2")
    assert result.returncode == 0, result.stderr[-2000:]
    assert not course.gradebook_path.exists(), "no SQLite gradebook beside PostgreSQL"
    export = tmp_path / "grades.json"
    assert run_cli(course, "--db", postgres, "export", "--json", str(export)).returncode == 0
    students = json.loads(export.read_text())["students"]
    scores = {student: grades[ASSIGNMENT]["score"] for student, grades in students.items()}
    assert sorted(scores) == sorted(expected)
    assert [scores[s] == 14.0 for s in sorted(expected)] == [True, False, True]


def test_the_batch_starts_with_the_new_and_the_slowest():
    """Never graded first, then by last grading's seconds, longest first; ties keep order."""
    from autograder.batch.submissions import Submission, longest_first
    from autograder.course.outcome import Outcome

    last = {"quick": 1.5, "slow": 12.0, "medium": 4.0, "also-quick": 1.5}
    batch = [(Submission(name, ASSIGNMENT, ""),
              Outcome(student=name, assignment=ASSIGNMENT, seconds=last[name])
              if name in last else None)
             for name in ["quick", "new", "slow", "also-quick", "medium", "newer"]]
    order = [s.student for s in longest_first(batch)]
    assert order == ["new", "newer", "slow", "medium", "quick", "also-quick"]


def test_one_open_gradebook_records_a_batch_and_outlives_a_failed_record(course):
    from autograder.batch.recorder import record
    from autograder.commands.grade import ensure_released
    from autograder.course.outcome import PASSED, CellResult, Outcome, load_outcome
    from autograder.submission.gradebook import expected_cells

    ensure_released(course, [ASSIGNMENT])
    cells = expected_cells(course.db_url, ASSIGNMENT)

    def outcome(student: str) -> Outcome:
        return Outcome(student, ASSIGNMENT, cells=[
            CellResult(cell.grade_id, notebook, 1.0, cell.max_score, PASSED, "")
            for notebook, expected in cells.items() for cell in expected])

    broken = outcome("broken")      # its scores are set, then its last cell is unknown
    broken.cells.append(CellResult("no-such-cell", broken.cells[0].notebook, 1.0, 1.0, PASSED,
                                   ""))
    with Gradebook(course.db_url) as gradebook:
        record(course, outcome("first"), gradebook=gradebook)
        with pytest.raises(Exception, match="No such grade"):
            record(course, broken, gradebook=gradebook)
        record(course, outcome("second"), gradebook=gradebook)
    points = sum(1.0 for grade_cells in cells.values() for _ in grade_cells)
    # The failed record's scores were not committed with the next one's; it has no report,
    # so the next run grades it again.
    assert _recorded(course) == {"first": points, "broken": 0.0, "second": points}
    assert load_outcome(course, "broken", ASSIGNMENT) is None


def test_a_local_worker_is_given_a_submission_only_when_it_is_free():
    from autograder.batch.cluster import dask_client

    with dask_client(2) as client:
        assert client.run_on_scheduler(
            lambda dask_scheduler: dask_scheduler.WORKER_SATURATION) == 1.0
