"""One submission, supervised: graded in a process of its own, again if anything abnormal
happened, and never allowed to stop the batch.

Runs on a Dask worker (:mod:`.cluster`). The grading process (:mod:`autograder.submission.child`,
forked warm by :mod:`.forkserver`) works in a workspace inside the batch's folder; whatever
it leaves running there is reaped (:mod:`autograder.sandbox.reaping`) when it ends.
"""

from __future__ import annotations

import hashlib
import shutil
import subprocess
from pathlib import Path

from ..course import CellResult, Course, Outcome
from ..course.outcome import NOT_RUN, TIMED_OUT
from ..sandbox import zygote
from ..sandbox.bubblewrap import sandbox_uid
from ..sandbox.reaping import reap, reap_user
from ..submission.child import GRADED_FOLDER
from ..submission.execute import describe_exit
from ..submission.gradebook import expected_cells
from ..submission.settings import max_fresh_runs
from .forkserver import GradingProcess

STARTUP_ALLOWANCE = 90   # seconds a grading process may spend starting nbgrader and a kernel


def workspace_name(student: str, assignment: str) -> str:
    """The folder (in a batch's scratch folder) where a submission is graded. The student's
    id is kept out of it: an id is whatever a folder of ``submitted/`` is called (``:`` would
    split the Jupyter path the sandbox's kernelspec is found on; a leading ``-`` reads as an
    option), and only a digest of it names the folder."""
    return f"{hashlib.sha256(student.encode()).hexdigest()[:20]}--{assignment}"


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
    workspace = scratch / workspace_name(student, assignment)
    if workspace.exists():
        shutil.rmtree(workspace)
    first = run_child(course, student, assignment, snapshot, timeout, workspace / "first",
                       threads)
    if not first.abnormal:
        return first, workspace / "first" / GRADED_FOLDER
    second = run_child(course, student, assignment, snapshot, timeout, workspace / "second",
                        threads)
    kept, folder = max([(first, "first"), (second, "second")],
                       key=lambda entry: (entry[0].score, not entry[0].abnormal,
                                          entry[1] == "second"))
    kept.attempts = [{"score": attempt.score, "abnormal": attempt.abnormal,
                      "verdicts": {c.grade_id: c.status for c in attempt.cells},
                      "kept": attempt is kept} for attempt in (first, second)]
    return kept, workspace / folder / GRADED_FOLDER


def run_child(course: Course, student: str, assignment: str, snapshot: Path, timeout: int,
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
    # --option=value: an id or a path may begin with "-"
    argv = [f"--root={course.root}", f"--assignment={assignment}", f"--student={student}",
            f"--gradebook={snapshot}", f"--timeout={timeout}", f"--output={output}",
            f"--workspace={workspace}", f"--threads={threads}"]
    kernels = zygote.for_this_thread()
    if kernels is not None:
        argv.append(f"--zygote={kernels.folder}")
    wall = wall_clock(course, timeout)
    # The grading process's messages go to a file, not a pipe: a process the submission left behind
    # could hold a pipe open, and reading it would wait for that process.
    log = workspace / "grading.log"
    process = GradingProcess(argv, course.root, log)
    returncode = None
    try:
        returncode = process.wait(timeout=wall)
    except subprocess.TimeoutExpired:
        return _ungraded(student, assignment, cells(), TIMED_OUT,
                         f"grading took longer than {wall} s and was stopped")
    finally:
        # Nothing the submission started may outlive its grading: the process's session, the
        # sandbox's processes (named by its folder), and anything its own user still runs.
        process.kill()
        reap(workspace)
        reap_user(sandbox_uid(process.pid))
    if returncode != 0 or not output.exists():
        lines = log.read_text(errors="replace").strip().splitlines() if log.exists() else []
        last = lines[-1].split(":")[0] if lines else "no message"   # no paths, no details
        return _ungraded(student, assignment, cells(), NOT_RUN,
                         f"the grader failed on this submission ({last[:80]}; its "
                         f"process ended with {describe_exit(returncode)})")
    return Outcome.from_json(output.read_text())


def wall_clock(course: Course, timeout: int) -> int:
    """Seconds a grading process of ``course`` may take: each run of the notebook may take
    ``timeout``, and a dead kernel costs a fresh run (as many as the executor is set to
    allow), plus the process's start."""
    return timeout * (max_fresh_runs(course, timeout) + 2) + STARTUP_ALLOWANCE


def _ungraded(student: str, assignment: str, cells: dict, status: str, reason: str) -> Outcome:
    return Outcome(student, assignment, reasons=[reason], abnormal=[reason],
                   cells=[CellResult(cell.grade_id, notebook, 0.0, float(cell.max_score), status,
                                     reason, graded_by=cell.graded_by)
                          for notebook, expected in cells.items() for cell in expected])
