"""The verdicts on a graded notebook, as data: what the steps of grading write, and read back.

Grading a notebook has three writers and one reader, all in the grading process:

* the executor (:class:`~.execute.ExecuteSurvivingCrashes`) leaves error outputs with the
  names below (a cell stopped, a kernel that died) and logs what went wrong to the *events*
  file, one JSON line per event;
* the judge of the hidden tests (:class:`~.hidden_cases.JudgeHiddenTests`) gives a failing
  test cell one error output, :data:`HIDDEN_FAILURE` with a message for the student — which
  nbgrader scores 0 — and logs every failing case to the *verdicts* file, as
  :class:`~autograder.hidden.judging.Failure` s, for the instructor;
* nbgrader itself scores the cells;
* and the grading process (:mod:`.child`) reads all of it back into an
  :class:`~autograder.course.Outcome` with the functions here.

The cases never enter the notebook, so neither the feedback nor the graded notebook can show
them. Nothing here parses a message: status, kind and label travel as fields.
"""

from __future__ import annotations

import json
from pathlib import Path

import nbformat
from nbformat import NotebookNode
from nbformat.v4 import new_output

from ..course.outcome import FAILED, NOT_RUN, PASSED, TIMED_OUT, clip
from ..hidden.judging import Failure, visible_failure

HIDDEN_FAILURE = "HiddenTestFailed"     # the error name of a failed hidden test
# The executor's error names: a cell the kernel died in (skipped on the next run), a cell
# that would not stop, the notebook's computing or waiting used up (cells not run), ...
KERNEL_DIED = "KernelDied"
KERNEL_STUCK = "CellWouldNotStop"
OUT_OF_TIME = "NotebookOutOfTime"
OUT_OF_WALL_TIME = "NotebookOutOfWallTime"
COMPUTED_TOO_LONG = "CellComputedTooLong"  # a cell stopped at its computing limit
TIMED_OUT_ERROR = "CellTimeoutError"       # a cell stopped by the wall clock (nbgrader's)
# Of these, only the wall clock's verdicts may depend on the machine's load.
WALL_CLOCK_ERRORS = (TIMED_OUT_ERROR, OUT_OF_WALL_TIME)
TIME_LIMIT_ERRORS = (COMPUTED_TOO_LONG, OUT_OF_TIME, *WALL_CLOCK_ERRORS)


def hidden_failure(message: str) -> NotebookNode:
    """The error output a test cell gets when its hidden tests fail."""
    return new_output("error", ename=HIDDEN_FAILURE, evalue=message,
                      traceback=[f"{HIDDEN_FAILURE}: {message}"])


# --------------------------------------------------------------------------- the logs


def log_failures(path: Path, notebook: str, grade_id: str, failures: list[Failure]) -> None:
    """Append a test cell's failing hidden cases to the verdicts file ``path``."""
    with path.open("a") as log:
        log.write(json.dumps({"notebook": notebook, "grade_id": grade_id,
                              "failures": [list(f) for f in failures]}) + "\n")


def logged_failures(path: Path) -> dict[tuple[str, str], list[Failure]]:
    """{(notebook, grade_id): failing hidden cases} from the verdicts file ``path``."""
    found: dict[tuple[str, str], list[Failure]] = {}
    if path.exists():
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            found[entry["notebook"], entry["grade_id"]] = \
                [Failure(*failure) for failure in entry["failures"]]
    return found


def log_event(path: Path, notebook: str, event: str) -> None:
    """Append what went wrong while running ``notebook`` to the events file ``path``."""
    with path.open("a") as log:
        log.write(json.dumps({"notebook": notebook, "event": event}) + "\n")


def logged_events(path: Path) -> list[str]:
    """What went wrong while running the notebooks, one line each, from ``path``."""
    if not path.exists():
        return []
    return [clip(f"{event['notebook']}: {event['event']}")
            for event in map(json.loads, path.read_text().splitlines())]


# --------------------------------------------------------------------------- the notebook


def error_of(cell: NotebookNode) -> tuple[str, str] | None:
    """(status, message) of a cell's error output, or None if it raised nothing.

    A cell stopped at the time limit shows a KeyboardInterrupt (the kernel was interrupted)
    and the limit's error: that is a timeout, not a failure of the code. A cell that killed
    the kernel was skipped on the re-run (``KernelDied``): it could not run.
    """
    errors = [o for o in cell.get("outputs", []) if o.output_type == "error"]
    if not errors:
        return None
    stopped = [o for o in errors if o.ename in TIME_LIMIT_ERRORS]
    if stopped:
        return TIMED_OUT, clip(stopped[-1].evalue or
                               "the cell ran past the time limit and was stopped")
    if errors[0].ename == KERNEL_STUCK:
        return TIMED_OUT, errors[0].evalue
    if errors[0].ename == KERNEL_DIED:
        return NOT_RUN, errors[0].evalue
    if errors[0].ename == HIDDEN_FAILURE:
        return FAILED, clip(f"hidden test: {errors[0].evalue}")
    error = errors[0]
    return FAILED, clip(f"{error.ename}: {error.evalue}" if error.evalue else error.ename)


def cell_verdicts(notebook: Path, hidden: dict[tuple[str, str], list[Failure]]
                  ) -> dict[str, tuple[str, str, list]]:
    """{grade_id: (status, message, failing cases)} of an autograded notebook's test cells;
    ``hidden`` holds the failing hidden cases the judge logged."""
    verdicts = {}
    for cell in nbformat.read(notebook, as_version=4).cells:
        meta = cell.metadata.get("nbgrader", {})
        if not meta.get("grade") or meta.get("solution") or cell.cell_type != "code":
            continue          # not a test: an answer graded by hand, or ungraded
        error = error_of(cell)
        if error:
            visible = [visible_failure(o.ename, o.evalue) for o in cell.outputs
                       if o.output_type == "error" and o.ename != HIDDEN_FAILURE]
            cases = visible + hidden.get((notebook.stem, meta["grade_id"]), [])
            verdicts[meta["grade_id"]] = (*error, [list(case) for case in cases])
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
        error = error_of(cell)
        if error:
            status, message = error
            where = f"{notebook.stem}: your cell '{meta.get('grade_id', 'without an id')}'"
            if status == TIMED_OUT:
                problems.append(f"{where} ran past the time limit and was stopped")
            elif status == NOT_RUN:
                problems.append(f"{where}: {message}")
            else:
                problems.append(clip(f"{where} raised {message}"))
    return problems


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
        error = error_of(cell)
        if error is None:
            continue
        meta = cell.metadata.get("nbgrader", {})
        name = meta.get("grade_id") or f"cell {index}"
        course_cell = meta and not meta.get("grade") and not meta.get("solution")
        wall_clock = any(o.get("ename") in WALL_CLOCK_ERRORS for o in cell.get("outputs", []))
        if wall_clock:
            found.append(f"{notebook.stem}: {name} was stopped by the wall clock")
        elif course_cell and error[0] != TIMED_OUT:
            found.append(clip(f"{notebook.stem}: the course's cell {name} failed ({error[1]})"))
    return found
