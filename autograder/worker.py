"""Grade one submission in a scratch course directory: ``python -m autograder.worker``.

The worker never writes to the course's gradebook. It copies the submission and a snapshot
of the gradebook into a scratch directory, runs nbgrader's autograder there (the notebook's
kernel in the sandbox of :mod:`autograder.sandbox`), and writes an
:class:`~autograder.outcome.Outcome` (JSON) that the single writer in
:mod:`autograder.grading` records. The autograded notebooks are copied back into the
course's ``autograded/<student>/<assignment>/`` for feedback.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import tempfile
import time
from pathlib import Path

import nbformat
from nbgrader.api import Gradebook, MissingEntry

from . import sandbox
from .course import Course
from .execute import KERNEL_DIED, KERNEL_STUCK, TIME_LIMIT_ERRORS, WALL_CLOCK_ERRORS
from .outcome import FAILED, NOT_RUN, PASSED, TIMED_OUT, CellResult, Outcome
from .preprocessors import DETAILS_PREFIX, HIDDEN_FAILURE
from .scratch_gradebook import scratch_databases
from .zygote import Zygote

_MESSAGE_LIMIT = 500
GRADED_FOLDER = "graded"     # in a workspace: the graded notebooks, for the writer
REHEARSAL_STUDENT = "autograder-rehearsal"   # see rehearse: never a real one's grades


def expected_cells(db_url: str, assignment: str) -> dict[str, list[tuple[str, float]]]:
    """{notebook: [(grade_id, max_score), ...]} of an assignment, from the gradebook."""
    with Gradebook(db_url) as gb:
        return {nb.name: [(cell.name, cell.max_score) for cell in nb.grade_cells]
                for nb in gb.find_assignment(assignment).notebooks}


def readable_notebook(path: Path) -> str | None:
    """``None`` if ``path`` is a notebook nbgrader can grade, else why it is not."""
    if not path.exists():
        return f"{path.name} is missing from the submission"
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as error:   # any unreadable notebook: bad JSON, wrong schema, not text
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"{path.name} is not a valid notebook ({type(error).__name__}: {first_line[:200]})"
    return None


def _error_of(cell) -> tuple[str, str] | None:
    """(status, message) of a cell's error output, or None if it raised nothing.

    A cell stopped at the time limit shows a KeyboardInterrupt (the kernel was interrupted)
    and nbgrader's CellTimeoutError: that is a timeout, not a failure of the code. A cell
    that killed the kernel was skipped on the re-run (``KernelDied``): it could not run.
    """
    errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
    if not errors:
        return None
    stopped = [o for o in errors if o.ename in TIME_LIMIT_ERRORS]
    if stopped:
        return TIMED_OUT, (stopped[-1].evalue or
                           "the cell ran past the time limit and was stopped")[:_MESSAGE_LIMIT]
    if errors[0].ename == KERNEL_STUCK:
        return TIMED_OUT, errors[0].evalue
    if errors[0].ename == KERNEL_DIED:
        return NOT_RUN, errors[0].evalue
    if errors[0].ename == HIDDEN_FAILURE:
        return FAILED, f"hidden test: {errors[0].evalue}"[:_MESSAGE_LIMIT]
    error = errors[0]
    message = f"{error.ename}: {error.evalue}" if error.evalue else error.ename
    return FAILED, message[:_MESSAGE_LIMIT]


def _details_of(cell) -> list:
    """[[case label, what is wrong], ...] of a failed test cell, for the instructor: the
    error its visible tests raised, and every failing hidden case the grader listed."""
    details = []
    for error in (o for o in cell.get("outputs", []) if o.output_type == "error"):
        if error.ename != HIDDEN_FAILURE:
            details.append(["visible tests",
                            f"{error.ename}: {error.evalue}"[:_MESSAGE_LIMIT]])
            continue
        for line in error.get("traceback", [])[1:]:
            if line.startswith(DETAILS_PREFIX):
                try:
                    found = json.loads(line.removeprefix(DETAILS_PREFIX))
                    details += [[str(label), str(problem)] for label, problem in found]
                except (ValueError, TypeError):      # written by the grader: not expected
                    pass
    return details


def cell_verdicts(notebook: Path) -> dict[str, tuple[str, str, list]]:
    """{grade_id: (status, message, details)} read from an autograded notebook's outputs."""
    verdicts = {}
    for cell in nbformat.read(notebook, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade") or cell.cell_type != "code":
            continue
        error = _error_of(cell)
        if error:
            verdicts[meta["grade_id"]] = (*error, _details_of(cell))
        elif cell.get("execution_count") is None:
            verdicts[meta["grade_id"]] = (NOT_RUN, "the cell was not executed", [])
        else:
            verdicts[meta["grade_id"]] = (PASSED, "", [])
    return verdicts


def answer_errors(notebook: Path) -> list[str]:
    """Errors raised by the student's own cells (not test cells), one line each."""
    problems = []
    for cell in nbformat.read(notebook, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade"):
            continue
        error = _error_of(cell)
        if error:
            status, message = error
            where = f"{notebook.stem}: your cell '{meta.get('grade_id', 'without an id')}'"
            if status == TIMED_OUT:
                problems.append(f"{where} ran past the time limit and was stopped")
            elif status == NOT_RUN:
                problems.append(f"{where}: {message}")
            else:
                problems.append(f"{where} raised {message}"[:_MESSAGE_LIMIT])
    return problems


def _events(path: Path) -> list[str]:
    """What :class:`~autograder.execute.ExecuteSurvivingCrashes` wrote to ``path``."""
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        event = json.loads(line)
        found.append(f"{event['notebook']}: {event['event']}"[:_MESSAGE_LIMIT])
    return found


def irregular_cells(notebook: Path) -> list[str]:
    """Cells whose verdict the machine may have decided rather than the code: a cell
    stopped by the wall clock (the computing limits do not depend on the load), and a
    course cell (the release's, neither an answer nor a test) that failed — course cells
    are written to run, so the grading went wrong, or the student's code broke them
    (grading again tells which)."""
    found = []
    for index, cell in enumerate(nbformat.read(notebook, as_version=4).cells):
        if cell.cell_type != "code":
            continue
        error = _error_of(cell)
        if error is None:
            continue
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id") or f"cell {index}"
        course_cell = meta and not meta.get("grade") and not meta.get("solution")
        wall_clock = any(o.get("ename") in WALL_CLOCK_ERRORS for o in cell.get("outputs", []))
        if wall_clock:
            found.append(f"{notebook.stem}: {name} was stopped by the wall clock")
        elif course_cell and error[0] != TIMED_OUT:
            found.append(f"{notebook.stem}: the course's cell {name} failed ({error[1]})"
                         [:_MESSAGE_LIMIT])
    return found


def copy_regular_files(source: Path, target: Path) -> list[str]:
    """Copy the folders and regular files under ``source``; say what else was left out.

    A link, followed, could bring any file the grader can read (the solutions, the
    gradebook) into the sandbox's view, or write over one; a named pipe would block the
    copy. Neither is followed or copied.
    """
    left_out = []
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.rglob("*")):       # rglob does not enter linked folders
        relative = path.relative_to(source)
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            left_out.append(f"{relative} is not a regular file or folder and was left out")
        elif path.is_dir():
            (target / relative).mkdir(exist_ok=True)
        else:
            shutil.copyfile(path, target / relative, follow_symlinks=False)
    return left_out


def restore_released_files(course: Course, assignment: str, staged: Path) -> None:
    """Put the release's other files (data, helper modules) into the submission as released.

    What nbgrader does from the source folder, which the scratch course does not have: a
    notebook is graded with the course's files, whether the student handed them in or not,
    changed or not.
    """
    release = course.release / assignment
    for path in sorted(release.rglob("*")):
        if path.is_file() and path.suffix != ".ipynb" and ".ipynb_checkpoints" not in path.parts:
            target = staged / path.relative_to(release)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.rmtree(target)
            shutil.copyfile(path, target)


def _cpu(timeout: int) -> int:
    """CPU seconds a kernel may use: the wall limit on two cores, plus start-up."""
    return 2 * timeout + 60


def grade_in_scratch(course: Course, assignment: str, student: str, gradebook: Path,
                     timeout: int, workspace: Path | None = None,
                     zygote: Zygote | None = None, execute: bool = True,
                     threads: int = 1) -> Outcome:
    """Grade ``submitted/<student>/<assignment>`` with nbgrader in a scratch directory.

    The scratch directory is made inside ``workspace`` (default: the system's temporary
    folder), so that whoever gave the workspace can find whatever grading left running.
    With a ``zygote`` (:mod:`autograder.zygote`), the notebook's kernels are forked warm by
    it, in its sandbox, rather than started cold in a sandbox of their own. Without
    ``execute``, every step is taken but running the notebook (see :func:`rehearse`).
    The kernel computes on ``threads`` threads (see :meth:`sandbox.Limits.threads_for`).
    """
    started = time.monotonic()
    outcome = Outcome(student=student, assignment=assignment)
    submission = course.submitted / student / assignment
    with tempfile.TemporaryDirectory(prefix="autograde-", dir=workspace) as scratch_dir, \
            tempfile.TemporaryDirectory(prefix="ag-") as sockets, \
            scratch_databases(Path(scratch_dir)):
        scratch = Course.at(scratch_dir)
        shutil.copy(gradebook, scratch.gradebook_path)
        cells = expected_cells(scratch.db_url, assignment)
        staged = scratch.submitted / student / assignment
        outcome.reasons.extend(copy_regular_files(submission, staged))
        restore_released_files(course, assignment, staged)
        gradable = []
        for notebook in cells:
            problem = readable_notebook(staged / f"{notebook}.ipynb")
            if problem:
                outcome.reasons.append(problem)
                (staged / f"{notebook}.ipynb").unlink(missing_ok=True)
            else:
                gradable.append(notebook)

        if gradable:
            # The kernel works in a folder of its own, never in the one nbgrader writes.
            # (with a zygote, this path only names the submission's kernels: see reap)
            workdir = Path(scratch_dir) / "sandbox" / student / assignment
            if zygote is not None:
                zygote.clear()
            jupyter_path, sandboxed = sandbox.install(Path(scratch_dir), workdir,
                                                      sandbox.Limits(cpu_seconds=_cpu(timeout),
                                                                     threads=threads),
                                                      ipc_dir=Path(sockets), zygote=zygote)
            # The sandbox's kernelspec comes first on JUPYTER_PATH while nbgrader runs.
            jupyter_path_before = os.environ.get("JUPYTER_PATH")
            os.environ["JUPYTER_PATH"] = os.pathsep.join(
                [str(jupyter_path), *filter(None, [jupyter_path_before])])
            # The scratch course has no release or hidden tests of its own: use the course's.
            sandboxed.RestoreCourseCells.release_root = str(course.release.resolve())
            sandboxed.ShipHiddenCases.suite_root = str(course.source.resolve())
            sandboxed.ExecuteSurvivingCrashes.enabled = execute
            events = Path(scratch_dir) / "execution-events.jsonl"
            sandboxed.ExecuteSurvivingCrashes.events_file = str(events)
            try:
                result = scratch.api(timeout=timeout, extra=sandboxed).autograde(
                    assignment, student, force=True, create=True)
            finally:      # whatever the notebook started dies before its results are read
                if jupyter_path_before is None:
                    os.environ.pop("JUPYTER_PATH", None)
                else:
                    os.environ["JUPYTER_PATH"] = jupyter_path_before
                sandbox.reap_user(sandbox.sandbox_uid())
                sandbox.reap(workdir)
                if zygote is not None:
                    zygote.clear()
            if not result["success"]:
                outcome.reasons.append(_nbgrader_failure(result))
                outcome.abnormal.append(f"nbgrader could not grade: {outcome.reasons[-1]}")
            outcome.abnormal.extend(_events(events))
        graded_dir = scratch.autograded / student / assignment
        outcome.cells = _collect_cells(scratch, graded_dir, cells, assignment, student)
        for notebook in sorted(graded_dir.glob("*.ipynb")):
            outcome.reasons.extend(answer_errors(notebook))
            outcome.abnormal.extend(irregular_cells(notebook))
        # With a workspace, the graded notebooks are left there for the one writer to
        # record (autograder.grading); without one, they go into the course directly.
        target = workspace / GRADED_FOLDER if workspace else \
            course.autograded / student / assignment
        if target.exists():
            shutil.rmtree(target)
        if graded_dir.exists():
            copy_regular_files(graded_dir, target)
    outcome.seconds = round(time.monotonic() - started, 2)
    return outcome


def rehearse(course: Course, assignment: str, gradebook: Path) -> Outcome:
    """Grade ``assignment``'s released notebook, as handed in untouched, taking every step
    but running it (no kernel starts); the outcome is thrown away.

    The grading fork server (:mod:`autograder.warmup`) rehearses each assignment of a
    batch before it forks any grading process, so that the caches the libraries fill the
    first time they are used (SQLAlchemy's loaders and compiled queries of the gradebook,
    nbgrader's and nbconvert's configuration) are filled once, there, not once per
    submission. Nothing is written outside a temporary folder, and the process's
    environment is left as it was.
    """
    environment = dict(os.environ)
    try:
        with tempfile.TemporaryDirectory(prefix="rehearsal-") as folder:
            stage = Course.at(folder)
            stage.release.symlink_to(course.release.resolve(), target_is_directory=True)
            stage.source.symlink_to(course.source.resolve(), target_is_directory=True)
            submission = stage.submitted / REHEARSAL_STUDENT / assignment
            shutil.copytree(course.release / assignment, submission)
            return grade_in_scratch(stage, assignment, REHEARSAL_STUDENT, gradebook,
                                    timeout=60, workspace=Path(folder), execute=False)
    finally:
        os.environ.clear()
        os.environ.update(environment)


def _collect_cells(scratch: Course, graded_dir: Path, cells: dict, assignment: str,
                   student: str) -> list[CellResult]:
    results = []
    with Gradebook(scratch.db_url) as gb:
        for notebook, grade_cells in cells.items():
            path = graded_dir / f"{notebook}.ipynb"
            verdicts = cell_verdicts(path) if path.exists() else {}
            for grade_id, max_score in grade_cells:
                status, message, details = verdicts.get(
                    grade_id, (NOT_RUN, "the notebook was not graded", []))
                try:
                    score = gb.find_grade(grade_id, notebook, assignment, student).score
                except MissingEntry:
                    score = 0.0
                if status != PASSED:
                    score = 0.0
                results.append(CellResult(grade_id, notebook, float(score or 0.0),
                                          float(max_score), status, message, details))
    return results


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
    parser.add_argument("--workspace", help="folder to grade in (default: a temporary one)")
    parser.add_argument("--zygote", help="folder of the kernel zygote to fork kernels from "
                        "(default: start each kernel cold)")
    parser.add_argument("--threads", type=int, default=1,
                        help="compute threads of the notebook's kernel (default: 1)")
    args = parser.parse_args(argv)
    outcome = grade_in_scratch(Course.at(args.root), args.assignment, args.student,
                               Path(args.gradebook), args.timeout,
                               Path(args.workspace) if args.workspace else None,
                               Zygote(Path(args.zygote)) if args.zygote else None,
                               threads=args.threads)
    Path(args.output).write_text(outcome.to_json())


if __name__ == "__main__":
    main()
