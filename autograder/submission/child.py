"""Grade one submission in a scratch course directory: the grading process's own work.

The grading process (forked warm by :mod:`autograder.batch.forkserver`, or started as
``python -m autograder.submission.child``) never writes to the course's gradebook. It
stages the submission (:mod:`.staging`) and a snapshot of the gradebook
(:mod:`.scratch_gradebook`) in a scratch directory inside its workspace, runs nbgrader's
autograder there with the course's settings (:mod:`.settings`; the notebook's kernel in
the sandbox of :mod:`autograder.sandbox`), reads the verdicts back (:mod:`.verdicts`) and
writes an :class:`~autograder.course.Outcome`, leaving the graded notebooks in the
workspace for the one writer (:mod:`autograder.batch.recorder`) to record.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook

from ..course import CellResult, Course, Outcome
from ..course.outcome import AWAITING, BY_HAND, FAILED, NOT_RUN, PASSED
from ..sandbox import kernelspec
from ..sandbox.bubblewrap import Limits, sandbox_uid
from ..sandbox.reaping import reap, reap_user
from ..sandbox.zygote import Zygote
from . import settings
from .gradebook import TASK, ExpectedCell, expected_cells, grades_of
from .scratch_gradebook import scratch_databases
from .staging import (
    choose_notebooks,
    copy_regular_files,
    readable_notebook,
    restore_released_files,
    submission_language,
)
from .verdicts import (
    answer_errors,
    cell_verdicts,
    irregular_cells,
    logged_events,
    logged_failures,
)

GRADED_FOLDER = "graded"     # in a workspace: the graded notebooks, for the writer
REHEARSAL_STUDENT = "autograder-rehearsal"   # see rehearse: never a real one's grades
# Who the submission is handed in by, in the scratch course: nbgrader takes a student id
# for a path and a glob pattern and strips whitespace around it, so the student's own id
# (whatever a folder of submitted/ is called) never reaches it. The outcome has the real id.
SCRATCH_STUDENT = "student"


def _cpu(timeout: int) -> int:
    """CPU seconds a kernel may use: the wall limit on two cores, plus start-up."""
    return 2 * timeout + 60


@dataclass(frozen=True)
class Submission:
    """What to grade: ``course``'s ``submitted/<student>/<assignment>``."""

    course: Course
    assignment: str
    student: str


@dataclass(frozen=True)
class Run:
    """How to grade it: against a snapshot of the ``gradebook``, the notebook allowed
    ``timeout`` seconds, in a scratch directory made inside ``workspace``.

    With a ``zygote`` (:mod:`autograder.sandbox.zygote`), the notebook's kernels are forked
    warm by it, in its sandbox, rather than started cold in a sandbox of their own. Without
    ``execute``, every step is taken but running the notebook (see :func:`rehearse`). The
    kernel computes on ``threads`` threads (see
    :meth:`~autograder.sandbox.bubblewrap.Limits.threads_for`).
    """

    gradebook: Path
    timeout: int
    workspace: Path
    zygote: Zygote | None = None
    execute: bool = True
    threads: int = 1


@dataclass(frozen=True)
class Scratch:
    """The scratch course directory a submission is graded in, the folder its kernel's
    sockets are made in, and where the executor and the judge log (see :mod:`.verdicts`)."""

    course: Course
    sockets: Path
    logs: Path


@dataclass
class Staged:
    """The submission as staged in the scratch course: the cells each notebook must have
    (``{notebook: [cell]}``), the notebooks that can be graded, what was wrong with the
    files handed in, and the notebooks' language."""

    folder: Path
    cells: dict[str, list[ExpectedCell]]
    gradable: list[str]
    reasons: list[str]
    language: str


@dataclass
class Findings:
    """What a step found: reasons said to the student, and what went wrong that may not be
    the submission's doing (see :attr:`~autograder.course.Outcome.abnormal`)."""

    reasons: list[str] = field(default_factory=list)
    abnormal: list[str] = field(default_factory=list)


def grade_in_scratch(submission: Submission, run: Run) -> Outcome:
    """Grade ``submission`` with nbgrader in a scratch directory made inside
    ``run.workspace``, and leave the graded notebooks in ``workspace/graded`` for the one
    writer to record: stage, run nbgrader, read the verdicts back, hand the notebooks over.

    Whoever gave the workspace can find whatever grading left running (its processes name
    it).
    """
    started = time.monotonic()
    with _scratch(run) as scratch:
        staged = _stage(submission, scratch)
        ran = _autograde(submission, run, scratch) if staged.gradable else Findings()
        cells, read = _read_back(scratch, staged, submission.assignment)
        _hand_over(scratch, submission.assignment, run.workspace)
    return Outcome(student=submission.student, assignment=submission.assignment, cells=cells,
                   reasons=staged.reasons + ran.reasons + read.reasons,
                   abnormal=ran.abnormal + read.abnormal, language=staged.language,
                   seconds=round(time.monotonic() - started, 2))


@contextlib.contextmanager
def _scratch(run: Run) -> Iterator[Scratch]:
    """A scratch course in the workspace, with a copy of the gradebook snapshot (and a
    folder for the kernel's sockets outside it); all removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="autograde-", dir=run.workspace) as folder, \
            tempfile.TemporaryDirectory(prefix="ag-") as sockets, \
            scratch_databases(Path(folder)):
        course = Course.at(folder)
        shutil.copy(run.gradebook, course.gradebook_path)
        yield Scratch(course, Path(sockets), logs=Path(folder))


def _stage(submission: Submission, scratch: Scratch) -> Staged:
    """The submission's regular files, with the released files it lacks, handed in by
    :data:`SCRATCH_STUDENT` in the scratch course; a notebook that cannot be read is
    removed (and said so)."""
    assignment = submission.assignment
    cells = expected_cells(scratch.course.db_url, assignment)
    folder = scratch.course.submitted / SCRATCH_STUDENT / assignment
    handed_in = submission.course.submitted / submission.student / assignment
    reasons = copy_regular_files(handed_in, folder)
    restore_released_files(submission.course, assignment, folder)
    reasons += choose_notebooks(folder, list(cells))
    language = submission_language(folder, list(cells))
    gradable = []
    for notebook in cells:
        problem = readable_notebook(folder / f"{notebook}.ipynb")
        if problem:
            reasons.append(problem)
            (folder / f"{notebook}.ipynb").unlink(missing_ok=True)
        else:
            gradable.append(notebook)
    return Staged(folder, cells, gradable, reasons, language)


def _autograde(submission: Submission, run: Run, scratch: Scratch) -> Findings:
    """nbgrader's autograde of the staged submission, its kernel in the sandbox; whatever
    the notebook started dies before its results are read."""
    # The kernel works in a folder of its own, never in the one nbgrader writes.
    # (with a zygote, this path only names the submission's kernels: see reap)
    workdir = scratch.logs / "sandbox" / submission.assignment
    if run.zygote is not None:
        run.zygote.clear()
    kernel = kernelspec.install(scratch.logs, workdir,
                                Limits(cpu_seconds=_cpu(run.timeout), threads=run.threads),
                                ipc_dir=scratch.sockets, zygote=run.zygote)
    extra = settings.sandboxed(submission.course, kernel, scratch.logs, execute=run.execute)
    try:
        with _first_on_jupyter_path(kernel.jupyter_path):
            result = settings.api(scratch.course, timeout=run.timeout, extra=extra).autograde(
                submission.assignment, SCRATCH_STUDENT, force=True, create=True)
    finally:
        reap_user(sandbox_uid())
        reap(workdir)
        if run.zygote is not None:
            run.zygote.clear()
    found = Findings()
    if not result["success"]:
        reason = _nbgrader_failure(result)
        found.reasons.append(reason)
        found.abnormal.append(f"nbgrader could not grade: {reason}")
    found.abnormal.extend(logged_events(settings.events_file(scratch.logs)))
    return found


def _read_back(scratch: Scratch, staged: Staged, assignment: str
               ) -> tuple[list[CellResult], Findings]:
    """Every cell's verdict, and what the graded notebooks show went wrong."""
    graded = _graded_folder(scratch, assignment)
    hidden = logged_failures(settings.verdicts_file(scratch.logs))
    cells = _collect_cells(scratch.course, graded, staged.folder, staged.cells, assignment,
                           SCRATCH_STUDENT, hidden)
    found = Findings()
    for notebook in sorted(graded.glob("*.ipynb")):
        found.reasons.extend(answer_errors(notebook))
        found.abnormal.extend(irregular_cells(notebook))
    return cells, found


def _hand_over(scratch: Scratch, assignment: str, workspace: Path) -> None:
    """The graded notebooks into ``workspace``'s :data:`GRADED_FOLDER`, for the writer."""
    graded = _graded_folder(scratch, assignment)
    target = workspace / GRADED_FOLDER
    if target.exists():
        shutil.rmtree(target)
    if graded.exists():
        copy_regular_files(graded, target)


def _graded_folder(scratch: Scratch, assignment: str) -> Path:
    return scratch.course.autograded / SCRATCH_STUDENT / assignment


@contextlib.contextmanager
def _first_on_jupyter_path(folder: Path) -> Iterator[None]:
    """``folder`` (the sandbox's kernelspec) first on ``JUPYTER_PATH`` while nbgrader runs;
    the variable as it was afterwards."""
    before = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = os.pathsep.join([str(folder), *filter(None, [before])])
    try:
        yield
    finally:
        if before is None:
            os.environ.pop("JUPYTER_PATH", None)
        else:
            os.environ["JUPYTER_PATH"] = before


def rehearse(course: Course, assignment: str, gradebook: Path) -> Outcome:
    """Grade ``assignment``'s released notebook, as handed in untouched, taking every step
    but running it (no kernel starts); the outcome is thrown away.

    The grading fork server (:mod:`autograder.batch.preload`) rehearses each assignment of
    a batch before it forks any grading process, so that the caches the libraries fill the
    first time they are used (SQLAlchemy's loaders and compiled queries of the gradebook,
    nbgrader's and nbconvert's configuration) are filled once, there, not once per
    submission. Nothing is written outside a temporary folder.
    """
    with tempfile.TemporaryDirectory(prefix="rehearsal-") as folder:
        stage = Course.at(folder)
        stage.release.symlink_to(course.release.resolve(), target_is_directory=True)
        stage.source.symlink_to(course.source.resolve(), target_is_directory=True)
        submission = stage.submitted / REHEARSAL_STUDENT / assignment
        shutil.copytree(course.release / assignment, submission)
        return grade_in_scratch(Submission(stage, assignment, REHEARSAL_STUDENT),
                                Run(gradebook, timeout=60, workspace=Path(folder),
                                    execute=False))


def _collect_cells(scratch: Course, graded_dir: Path, staged: Path, cells: dict,
                   assignment: str, student: str, hidden: dict) -> list[CellResult]:
    """Every cell that carries points, with its verdict: a test's from the notebook's
    outputs (and nbgrader's score, partial credit included), a hand-graded cell's from
    nbgrader's flags (awaiting a grade, or an answer left as released: 0)."""
    results = []
    with Gradebook(scratch.db_url) as gb:
        grades = grades_of(gb, assignment, student)
        for notebook, expected in cells.items():
            path = graded_dir / f"{notebook}.ipynb"
            verdicts = cell_verdicts(path, hidden) if path.exists() else {}
            answers = _answer_digests(staged / f"{notebook}.ipynb")
            for cell in expected:
                grade = grades.get((notebook, cell.grade_id))
                if cell.graded_by == BY_HAND:
                    results.append(_hand_graded(cell, notebook, grade if path.exists() else None,
                                                answers))
                    continue
                status, message, details = verdicts.get(
                    cell.grade_id, (NOT_RUN, "the notebook was not graded", []))
                score = grade.score if grade is not None and status == PASSED else 0.0
                results.append(CellResult(cell.grade_id, notebook, float(score or 0.0),
                                          float(cell.max_score), status, message, details,
                                          answer_digest=answers.get("", "")))
    return results


def _hand_graded(cell: ExpectedCell, notebook: str, grade, answers: dict[str, str]
                 ) -> CellResult:
    # A task is graded on the whole notebook; an answer on its own cell.
    digest = answers.get("" if cell.kind == TASK else cell.grade_id, "")
    result = CellResult(cell.grade_id, notebook, 0.0, float(cell.max_score), NOT_RUN,
                        "the notebook was not graded", graded_by=BY_HAND,
                        answer_digest=digest)
    if grade is None:
        return result
    # Decided from nbgrader's automatic score alone (the scratch gradebook's flags carry the
    # course's earlier hand grades): a task always awaits a person; an answer does unless
    # nbgrader scored it 0 automatically, being as released.
    if cell.kind == TASK or grade.auto_score is None:
        result.status, result.message = AWAITING, "to be graded by hand"
        result.needs_manual_grade = True
    else:
        result.status, result.message = FAILED, "no answer: the cell is as released"
        result.score = float(grade.auto_score)
    return result


def _answer_digests(path: Path) -> dict[str, str]:
    """{grade_id: hash of the cell's source} of a submitted notebook's cells, and under ""
    a hash of all its cells (what a task is graded on); {} if it cannot be read."""
    try:
        cells = nbformat.read(path, as_version=4).cells
    except Exception:     # noqa: BLE001 - unreadable: said elsewhere; nothing to compare
        return {}
    digests = {"": hashlib.sha256("\0".join(c.source for c in cells).encode()).hexdigest()}
    for cell in cells:
        grade_id = cell.metadata.get("nbgrader", {}).get("grade_id")
        if grade_id:
            digests.setdefault(grade_id, hashlib.sha256(cell.source.encode()).hexdigest())
    return digests


_FAILURES = {
    "DeadKernelError": "the notebook's kernel died (the code exited, crashed or ran out of "
                       "memory), so its tests could not run",
    "Kernel died": "the notebook's kernel died (the code exited, crashed or ran out of "
                   "memory), so its tests could not run",
    "UnresponsiveKernelError": "the notebook's kernel stopped responding",
    "CellTimeoutError": "the notebook ran past the time limit",
}


def _nbgrader_failure(result: dict) -> str:
    """One line saying why nbgrader could not grade, without internals or hidden code."""
    text = f"{result.get('error') or ''}\n{result.get('log') or ''}"
    for known, reason in _FAILURES.items():
        if known in text:
            return reason
    return "nbgrader could not finish grading this notebook"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--root", required=True)
    parser.add_argument("--assignment", required=True)
    parser.add_argument("--student", required=True)
    parser.add_argument("--gradebook", required=True, help="snapshot of the gradebook to use")
    parser.add_argument("--timeout", type=int, required=True)
    parser.add_argument("--output", required=True, help="where to write the outcome (JSON)")
    parser.add_argument("--workspace", required=True,
                        help="folder to grade in; the graded notebooks are left in its "
                        "graded/ folder")
    parser.add_argument("--zygote", help="folder of the kernel zygote to fork kernels from "
                        "(default: start each kernel cold)")
    parser.add_argument("--threads", type=int, default=1,
                        help="compute threads of the notebook's kernel (default: 1)")
    args = parser.parse_args(argv)
    submission = Submission(Course.at(args.root), args.assignment, args.student)
    run = Run(Path(args.gradebook), args.timeout, Path(args.workspace),
              zygote=Zygote(Path(args.zygote)) if args.zygote else None, threads=args.threads)
    outcome = grade_in_scratch(submission, run)
    Path(args.output).write_text(outcome.to_json())


if __name__ == "__main__":
    main()
