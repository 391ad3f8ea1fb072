"""`grade`: grade every submission on a Dask cluster and record the grades, one writer.

Each submission is graded by nbgrader in a process of its own (:mod:`autograder.worker`,
forked warm by :mod:`autograder.warm`), started on a Dask worker: by default a local
cluster of ``--jobs`` workers on this machine, or any existing cluster (``--scheduler ADDRESS``:
Kubernetes, Slurm through dask-jobqueue, …) whose workers see the course directory at the
same path. Workers never touch the gradebook or ``autograded/``: each grades in a scratch
folder inside the batch's folder and returns an :class:`~autograder.outcome.Outcome`.
This process is the only writer: it records each outcome as it arrives — the gradebook,
then the graded notebooks, then the outcome's report, last, which marks the submission
done.

So grading can be stopped at any moment and started again: a submission whose report
names the same submitted files and the same tests is not graded again (``force`` grades
everything), and nothing is recorded twice — the gradebook holds one grade per cell,
which recording overwrites. A submission that cannot be graded — unreadable, missing,
crashing or too slow — still gets its row, with the marks it earned, zero for the rest
and the reasons; it never stops the batch.
"""

from __future__ import annotations

import contextlib
import hashlib
import math
import os
import shutil
import sqlite3
import subprocess
import tempfile
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from nbgrader.api import (
    Assignment,
    Base,
    BaseCell,
    Grade,
    Gradebook,
    MissingEntry,
    Notebook,
    SubmittedAssignment,
    SubmittedNotebook,
)
from sqlalchemy.exc import SAWarning
from tqdm import tqdm

from . import sandbox, warm
from . import zygote as zygotes
from .course import Course
from .execute import ExecuteSurvivingCrashes, describe_exit
from .nbgrader_setup import DEFAULT_TIMEOUT
from .outcome import NOT_RUN, TIMED_OUT, CellResult, Outcome
from .warm import GradingProcess
from .worker import GRADED_FOLDER, expected_cells

REPORT_NAME = "autograder-report.json"
BATCH_PREFIX = ".grading-"
STARTUP_ALLOWANCE = 90   # seconds a worker may spend starting nbgrader and a kernel


@dataclass(frozen=True)
class Submission:
    """``submitted/<student>/<assignment>/`` and a fingerprint of what grading it depends
    on: its files and the assignment's tests."""

    student: str
    assignment: str
    fingerprint: str


def find_submissions(course: Course, assignments: list[str] | None = None) -> list[Submission]:
    """Every ``submitted/<student>/<assignment>/`` folder of ``assignments`` (default: all)."""
    wanted = set(assignments or course.assignments())
    found = []
    if course.submitted.is_dir():
        versions = {a: _assignment_version(course, a) for a in wanted}
        for student_dir in sorted(course.submitted.iterdir()):
            for assignment_dir in sorted(student_dir.iterdir()) if student_dir.is_dir() else []:
                if assignment_dir.is_dir() and assignment_dir.name in wanted:
                    fingerprint = _digest([assignment_dir], versions[assignment_dir.name])
                    found.append(Submission(student_dir.name, assignment_dir.name, fingerprint))
    return found


def _digest(folders: list[Path], salt: str = "") -> str:
    """A hash of the names and contents of the regular files under ``folders``."""
    digest = hashlib.sha256(salt.encode())
    for folder in folders:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and not path.is_symlink():
                digest.update(str(path.relative_to(folder)).encode() + b"\0")
                digest.update(path.read_bytes())
    return digest.hexdigest()


def _assignment_version(course: Course, assignment: str) -> str:
    """What an assignment's grading depends on: its source, hidden tests and release."""
    return _digest([course.source / assignment, course.release / assignment])


def is_recorded(submission: Submission, outcome: Outcome | None) -> bool:
    """Whether ``outcome``, the one recorded for the submission's student and assignment
    (if any), is of this very submission (same files, same tests)."""
    return outcome is not None and outcome.fingerprint == submission.fingerprint


def longest_first(batch: list[tuple[Submission, Outcome | None]]) -> list[Submission]:
    """The batch (each submission with its last recorded outcome) in the order to grade
    it: first those never graded, then the others by how long they took last time,
    longest first (a slow notebook started last would run alone at the end while the
    other workers wait). Ties keep their order."""
    def last_seconds(entry: tuple[Submission, Outcome | None]) -> float:
        outcome = entry[1]
        return outcome.seconds if outcome is not None and outcome.seconds else math.inf

    return [submission for submission, _ in sorted(batch, key=last_seconds, reverse=True)]


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
    """A consistent SQLite copy of the gradebook for workers to read.

    An SQLite gradebook is copied with SQLite's backup API; any other database (PostgreSQL
    for a team of graders) table by table into a new SQLite file of nbgrader's schema.
    """
    if course.db_url.startswith("sqlite:///"):
        with sqlite3.connect(course.db_url.removeprefix("sqlite:///")) as source, \
                sqlite3.connect(target) as copy:
            source.backup(copy)
        return target
    with Gradebook(course.db_url) as source, Gradebook(f"sqlite:///{target}") as copy:
        with source.engine.connect() as reading, copy.engine.begin() as writing:
            for table in reversed(Base.metadata.sorted_tables):   # what nbgrader put there
                writing.execute(table.delete())
            for table in Base.metadata.sorted_tables:
                rows = [dict(row._mapping) for row in reading.execute(table.select())]
                if rows:
                    writing.execute(table.insert(), rows)
    return target


# --------------------------------------------------------------------------- one submission


def grade_submission(course: Course, student: str, assignment: str, snapshot: Path,
                     timeout: int, scratch: Path, threads: int = 1) -> tuple[Outcome, Path]:
    """Grade one submission, twice if anything abnormal happened the first time; returns
    the outcome to record and the folder of its graded notebooks. Never raises for the
    submission's faults. Runs on a Dask worker.

    Correct work must never lose marks to the machine: when the first grading saw
    something that may be the machine's doing rather than the code's (a kernel that died
    or failed to start, a cell stopped at a time limit, a course cell that failed, a
    grading process that ended without a result — ``Outcome.abnormal``), the submission
    is graded again, from scratch, before anything is recorded. The attempt with the
    higher score is kept (on a tie, one without anything abnormal, else the later one);
    both attempts are in ``Outcome.attempts``, for the instructor's report.
    """
    workspace = scratch / f"{student}--{assignment}"
    if workspace.exists():
        shutil.rmtree(workspace)
    first = run_worker(course, student, assignment, snapshot, timeout, workspace / "first",
                       threads)
    if not first.abnormal:
        return first, workspace / "first" / GRADED_FOLDER
    second = run_worker(course, student, assignment, snapshot, timeout, workspace / "second",
                        threads)
    kept, folder = max([(first, "first"), (second, "second")],
                       key=lambda entry: (entry[0].score, not entry[0].abnormal,
                                          entry[1] == "second"))
    kept.attempts = [{"score": attempt.score, "abnormal": attempt.abnormal,
                      "verdicts": {c.grade_id: c.status for c in attempt.cells},
                      "kept": attempt is kept} for attempt in (first, second)]
    return kept, workspace / folder / GRADED_FOLDER


def run_worker(course: Course, student: str, assignment: str, snapshot: Path, timeout: int,
               workspace: Path, threads: int = 1) -> Outcome:
    """Grade one submission once, in a child process working in ``workspace``; never
    raises for the submission's faults.

    The graded notebooks are left in ``<workspace>/graded`` for the writer to record. The
    notebook's kernel computes on ``threads`` threads.
    """
    def cells() -> dict:     # read only when the submission cannot be graded
        return expected_cells(f"sqlite:///{snapshot}", assignment)

    if workspace.exists():
        shutil.rmtree(workspace)
    workspace.mkdir(parents=True)
    output = workspace / "outcome.json"
    argv = ["--root", str(course.root), "--assignment", assignment, "--student", student,
            "--gradebook", str(snapshot), "--timeout", str(timeout), "--output", str(output),
            "--workspace", str(workspace), "--threads", str(threads)]
    zygote = zygotes.for_this_thread()
    if zygote is not None:
        argv += ["--zygote", str(zygote.folder)]
    # Each run of the notebook may take `timeout`; a dead kernel costs a fresh run.
    wall = timeout * (ExecuteSurvivingCrashes.max_fresh_runs.default_value + 2) \
        + STARTUP_ALLOWANCE
    # The worker's messages go to a file, not a pipe: a process the submission left behind
    # could hold a pipe open, and reading it would wait for that process.
    log = workspace / "worker.log"
    process = GradingProcess(argv, course.root, log)
    returncode = None
    try:
        returncode = process.wait(timeout=wall)
    except subprocess.TimeoutExpired:
        return _ungraded(student, assignment, cells(), TIMED_OUT,
                         f"grading took longer than {wall} s and was stopped")
    finally:
        # Nothing the submission started may outlive its grading: the worker's session, the
        # sandbox's processes (named by its folder), and anything its own user still runs.
        process.kill()
        sandbox.reap(workspace)
        sandbox.reap_user(sandbox.sandbox_uid(process.pid))
    if returncode != 0 or not output.exists():
        lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
        last = lines[-1].split(":")[0] if lines else "no message"   # no paths, no details
        return _ungraded(student, assignment, cells(), NOT_RUN,
                         f"the grader failed on this submission ({last[:80]}; its "
                         f"process ended with {describe_exit(returncode)})")
    return Outcome.from_json(output.read_text())


def _ungraded(student: str, assignment: str, cells: dict, status: str, reason: str) -> Outcome:
    return Outcome(student, assignment, reasons=[reason], abnormal=[reason],
                   cells=[CellResult(grade_id, notebook, 0.0, float(max_score), status, reason)
                          for notebook, grade_cells in cells.items()
                          for grade_id, max_score in grade_cells])


# --------------------------------------------------------------------------- the writer


def record(course: Course, outcome: Outcome, graded: Path | None = None,
           gradebook: Gradebook | None = None) -> None:
    """Record one outcome: the gradebook, the graded notebooks (from ``graded``), and the
    outcome's report, written last and atomically: it marks the submission done.

    ``gradebook``, if given, is the course's gradebook, open (a batch keeps one open: a
    fresh connection compiles every query again); otherwise one is opened for this.
    """
    with contextlib.ExitStack() as stack:
        gb = gradebook or stack.enter_context(Gradebook(course.db_url))
        try:
            _record_grades(gb, outcome)
        except BaseException:
            gb.db.rollback()     # none of it is committed with the next outcome
            raise
    target = course.autograded / outcome.student / outcome.assignment
    if target.exists():
        shutil.rmtree(target)
    if graded is not None and graded.is_dir():
        shutil.copytree(graded, target, symlinks=True)
    report = target / REPORT_NAME
    partial = report.with_suffix(".partial")
    outcome.save(partial)
    partial.replace(report)


def _record_grades(gb: Gradebook, outcome: Outcome) -> None:
    with warnings.catch_warnings():
        # nbgrader's add_submission trips SQLAlchemy's autoflush warnings; they are harmless.
        warnings.simplefilter("ignore", SAWarning)
        gb.update_or_create_student(outcome.student)
        gb.update_or_create_submission(outcome.assignment, outcome.student)
        grades = _grades_of(gb, outcome.assignment, outcome.student)
        for cell in outcome.cells:
            grade = grades.get((cell.notebook, cell.grade_id))
            if grade is None:
                raise MissingEntry(f"No such grade: {outcome.assignment}/{cell.notebook}/"
                                   f"{cell.grade_id} for {outcome.student}")
            grade.auto_score = cell.score
            grade.manual_score = None
        gb.db.commit()


def _grades_of(gb: Gradebook, assignment: str, student: str) -> dict[tuple[str, str], Grade]:
    """{(notebook, cell): grade} of a submission, in one query (nbgrader's find_grade makes
    one, or two, per cell)."""
    rows = gb.db.query(Grade, Notebook.name, BaseCell.name) \
        .join(BaseCell, BaseCell.id == Grade.cell_id) \
        .join(SubmittedNotebook, SubmittedNotebook.id == Grade.notebook_id) \
        .join(Notebook, Notebook.id == SubmittedNotebook.notebook_id) \
        .join(SubmittedAssignment, SubmittedAssignment.id == SubmittedNotebook.assignment_id) \
        .join(Assignment, Assignment.id == SubmittedAssignment.assignment_id) \
        .filter(Assignment.name == assignment, SubmittedAssignment.student_id == student) \
        .all()
    return {(notebook, cell): grade for grade, notebook, cell in rows}


def load_outcome(course: Course, student: str, assignment: str) -> Outcome | None:
    """The recorded outcome of a graded submission, or None if it was never graded."""
    report = course.autograded / student / assignment / REPORT_NAME
    return Outcome.load(report) if report.exists() else None


# --------------------------------------------------------------------------- the batch


@contextlib.contextmanager
def dask_client(jobs: int, scheduler: str | None = None) -> Iterator:
    """A Dask client: to the cluster at ``scheduler``, or to a local cluster of ``jobs``
    single-threaded workers in this process.

    A local worker only waits: each submission is graded in a process of its own (forked
    warm from :mod:`autograder.warm`, its kernels from :mod:`autograder.zygote`), so worker
    processes would only add their start-up (an interpreter importing nbgrader each) to
    every batch. Everything grading starts dies with this process (parent-death signals).
    """
    import logging

    import dask
    from distributed import Client, LocalCluster

    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    # A worker gets a submission only when it is free (Dask's default hands each one a
    # second to queue, which may wait behind a slow notebook until another steals it).
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}), \
            LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=False,
                         dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client


def _clear_abandoned_batches(course: Course) -> None:
    """Remove the scratch folders of batches whose grader is gone (killed, say)."""
    for folder in course.root.glob(f"{BATCH_PREFIX}*"):
        owner = folder / "owner.pid"
        try:
            alive = owner.exists() and Path(f"/proc/{int(owner.read_text())}").exists()
        except ValueError:
            alive = False
        if not alive:
            shutil.rmtree(folder, ignore_errors=True)


def grade(course: Course, assignments: list[str] | None = None, jobs: int = 1,
          timeout: int = DEFAULT_TIMEOUT, progress: bool = True, force: bool = False,
          scheduler: str | None = None) -> list[Outcome]:
    """Grade the submissions of ``assignments`` (default: all) not yet recorded as they are
    (every one with ``force``), and record the grades. Returns this run's outcomes."""
    submissions = find_submissions(course, assignments)
    ensure_released(course, sorted({s.assignment for s in submissions}))
    batch = [(s, load_outcome(course, s.student, s.assignment)) for s in submissions]
    todo = longest_first([(s, outcome) for s, outcome in batch
                          if force or not is_recorded(s, outcome)])
    if not todo:
        return []
    _clear_abandoned_batches(course)
    outcomes = []
    # The batch's scratch folder is in the course, so everything grading starts names the
    # course (see sandbox.reap), and a batch never mistakes another course's processes.
    with tempfile.TemporaryDirectory(prefix=BATCH_PREFIX, dir=course.root) as scratch_dir:
        scratch = Path(scratch_dir)
        (scratch / "owner.pid").write_text(str(os.getpid()))
        snapshot = snapshot_gradebook(course, scratch / "gradebook-snapshot.db")
        warm.prepare(course.root, sorted({s.assignment for s in todo}), snapshot)
        try:
            if scheduler is None:   # the local workers' fork server and zygotes start now
                warm.start_server()
                zygotes.prestart(min(jobs, len(todo)))
            with dask_client(jobs, scheduler) as client, Gradebook(course.db_url) as gradebook:
                from distributed import as_completed

                # Local kernels share this machine's cores; a cluster's workers, whose
                # machines this process does not know, give each kernel one.
                threads = sandbox.Limits.threads_for(jobs) if scheduler is None else 1
                futures = {client.submit(grade_submission, course, s.student, s.assignment,
                                         snapshot, timeout, scratch, threads, pure=False,
                                         key=f"grade-{i}"): s
                           for i, s in enumerate(todo)}
                for future in tqdm(as_completed(futures), total=len(futures), desc="grading",
                                   unit="submission", disable=not progress):
                    submission = futures[future]
                    outcome, graded = future.result()
                    outcome.fingerprint = submission.fingerprint
                    record(course, outcome, graded, gradebook)
                    shutil.rmtree(scratch / f"{submission.student}--{submission.assignment}",
                                  ignore_errors=True)
                    outcomes.append(outcome)
        finally:
            if scheduler is None:     # the local workers' zygotes: their threads are gone
                zygotes.stop_all()
    return sorted(outcomes, key=lambda o: (o.assignment, o.student))
