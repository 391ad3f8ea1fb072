"""`grade`: grade every submission, each in its own worker process, and record the grades.

Workers run in parallel (``--jobs``) and never touch the gradebook: each grades in a
scratch directory and returns an :class:`~autograder.outcome.Outcome`. This process is the
only writer: it records each outcome as it arrives. A submission that cannot be graded —
unreadable, missing, crashing or too slow — still gets its row, with the marks it earned,
zero for the rest and the reasons; it never stops the batch.
"""

from __future__ import annotations

import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import warnings
from concurrent.futures import ThreadPoolExecutor, as_completed
from pathlib import Path

from nbgrader.api import Gradebook, MissingEntry
from sqlalchemy.exc import SAWarning
from tqdm import tqdm

from . import sandbox
from .course import Course
from .nbgrader_setup import DEFAULT_TIMEOUT
from .outcome import NOT_RUN, TIMED_OUT, CellResult, Outcome
from .preprocessors import ExecuteSurvivingCrashes
from .worker import expected_cells

REPORT_NAME = "autograder-report.json"
PACKAGE_PARENT = Path(__file__).resolve().parent.parent
STARTUP_ALLOWANCE = 90   # seconds a worker may spend starting nbgrader and a kernel


def find_submissions(course: Course, assignments: list[str] | None = None) -> list[tuple[str, str]]:
    """(student, assignment) for every ``submitted/<student>/<assignment>/`` folder."""
    wanted = set(assignments or course.assignments())
    found = []
    if course.submitted.is_dir():
        for student_dir in sorted(course.submitted.iterdir()):
            for assignment_dir in sorted(student_dir.iterdir()) if student_dir.is_dir() else []:
                if assignment_dir.is_dir() and assignment_dir.name in wanted:
                    found.append((student_dir.name, assignment_dir.name))
    return found


def ensure_released(course: Course, assignments: list[str]) -> None:
    """Make sure the gradebook knows each assignment (a fresh clone has no gradebook)."""
    from .release import release

    missing = []
    with Gradebook(course.db_url) as gb:
        for assignment in assignments:
            try:
                gb.find_assignment(assignment)
            except MissingEntry:
                missing.append(assignment)
    if missing:
        release(course, missing)


def snapshot_gradebook(course: Course, target: Path) -> Path:
    """A consistent copy of the gradebook for workers to read (SQLite's backup API)."""
    with sqlite3.connect(course.gradebook_path) as source, sqlite3.connect(target) as copy:
        source.backup(copy)
    return target


def run_worker(course: Course, student: str, assignment: str, snapshot: Path, timeout: int,
               scratch: Path) -> Outcome:
    """Grade one submission in a child process; never raises for the submission's faults."""
    cells = expected_cells(f"sqlite:///{snapshot}", assignment)
    output = scratch / f"{student}--{assignment}.json"
    workspace = scratch / f"{student}--{assignment}"
    workspace.mkdir()
    # The package is put on the worker's sys.path, not in PYTHONPATH, which the notebook's
    # kernel would inherit.
    bootstrap = (f"import sys; sys.path.insert(0, {str(PACKAGE_PARENT)!r}); "
                 "from autograder.worker import main; main()")
    command = [sys.executable, "-c", bootstrap, "--root", str(course.root),
               "--assignment", assignment, "--student", student, "--gradebook", str(snapshot),
               "--timeout", str(timeout), "--output", str(output), "--workspace", str(workspace)]
    # Each run of the notebook may take `timeout`; a dead kernel costs a fresh run.
    wall = timeout * (ExecuteSurvivingCrashes.max_kernel_deaths.default_value + 1) \
        + STARTUP_ALLOWANCE
    stale = course.autograded / student / assignment
    if stale.exists():
        shutil.rmtree(stale)   # a previous run's notebooks must not pass for this run's
    process = subprocess.Popen(command, cwd=course.root, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        _, stderr = process.communicate(timeout=wall)
    except subprocess.TimeoutExpired:
        _kill_group(process)
        return _ungraded(student, assignment, cells, TIMED_OUT,
                         f"grading took longer than {wall} s and was stopped")
    finally:
        _kill_group(process)       # nothing the submission started may outlive its grading:
        sandbox.reap(workspace)    # the worker's group, then its sandbox's processes
    if process.returncode != 0 or not output.exists():
        last = (stderr or "").strip().splitlines()[-1:] or ["no message"]
        return _ungraded(student, assignment, cells, NOT_RUN,
                         f"the grader failed on this submission ({last[0][:200]})")
    return Outcome.from_json(output.read_text())


def _kill_group(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait()


def _ungraded(student: str, assignment: str, cells: dict, status: str, reason: str) -> Outcome:
    return Outcome(student, assignment, reasons=[reason],
                   cells=[CellResult(grade_id, notebook, 0.0, float(max_score), status, reason)
                          for notebook, grade_cells in cells.items()
                          for grade_id, max_score in grade_cells])


def record(course: Course, outcome: Outcome) -> None:
    """Write one outcome into the gradebook and next to the autograded notebooks."""
    with Gradebook(course.db_url) as gb, warnings.catch_warnings():
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; they are harmless.
        warnings.simplefilter("ignore", SAWarning)
        gb.update_or_create_student(outcome.student)
        gb.update_or_create_submission(outcome.assignment, outcome.student)
        for cell in outcome.cells:
            grade = gb.find_grade(cell.grade_id, cell.notebook, outcome.assignment,
                                  outcome.student)
            grade.auto_score = cell.score
            grade.manual_score = None
        gb.db.commit()
    report = course.autograded / outcome.student / outcome.assignment / REPORT_NAME
    outcome.save(report)


def load_outcome(course: Course, student: str, assignment: str) -> Outcome | None:
    """The recorded outcome of a graded submission, or None if it was never graded."""
    report = course.autograded / student / assignment / REPORT_NAME
    return Outcome.load(report) if report.exists() else None


def grade(course: Course, assignments: list[str] | None = None, jobs: int = 1,
          timeout: int = DEFAULT_TIMEOUT, progress: bool = True) -> list[Outcome]:
    """Grade every submission of ``assignments`` (default: all) and record the grades."""
    submissions = find_submissions(course, assignments)
    ensure_released(course, sorted({a for _, a in submissions}))
    outcomes = []
    # The batch's scratch folder is in the course, so everything grading starts names the
    # course (see sandbox.reap), and a batch never mistakes another course's processes.
    with tempfile.TemporaryDirectory(prefix=".grading-", dir=course.root) as scratch_dir:
        scratch = Path(scratch_dir)
        snapshot = snapshot_gradebook(course, scratch / "gradebook-snapshot.db")
        with ThreadPoolExecutor(max_workers=max(1, jobs)) as pool:
            futures = [pool.submit(run_worker, course, student, assignment, snapshot, timeout,
                                   scratch) for student, assignment in submissions]
            for future in tqdm(as_completed(futures), total=len(futures), desc="grading",
                               unit="submission", disable=not progress):
                outcome = future.result()
                record(course, outcome)
                outcomes.append(outcome)
    return sorted(outcomes, key=lambda o: (o.assignment, o.student))
