"""Running a submission's notebook: nbgrader's Execute, made robust to what can go wrong.

nbgrader runs every cell in one kernel and gives up on the whole notebook when the kernel
dies. :class:`ExecuteSurvivingCrashes` runs it again instead, and keeps to one rule: **a
cell is charged with a kernel's death only when the death is reproduced with that cell.**

* The kernel dies in cell *i* (``os._exit``, a segfault, the memory limit), or cell *i*
  runs past its time limit and does not stop when interrupted: the notebook runs again
  from the start in a fresh kernel, *with* cell *i*. If the same happens in cell *i*
  again, cell *i* is blamed: it gets an error saying what the grader saw (the exit status
  or signal, the step), and the notebook runs once more without it, so the crash costs
  only the tests it prevents. If cell *i* runs normally the second time, nothing is
  charged: the first death was the machine's, not the code's.
* The kernel fails to start, dies between cells, or a cell's reply comes but its output
  does not follow in time (a loaded machine): that is never charged to the student; the
  notebook simply runs again.
* After ``max_fresh_runs`` fresh runs, the cell that stopped the last one and every cell
  after it get the error.

**Time limits count computing, not waiting for a core.** A cell may compute for
``timeout`` seconds and a run of the notebook for ``notebook_timeout`` seconds, on the
kernel's ``threads`` threads: its CPU time is watched (:mod:`autograder.sandbox.kernel_time`), so
a loaded machine, which only makes the kernel wait longer for a core, changes nothing. A
cell past its limit is interrupted (and its kernel killed if that does not stop it). Code
that waits without computing (``time.sleep``, a deadlock) is stopped by wall-clock limits
``wall_factor`` times longer, on a clock that stops while the kernel waits for a core (its
run delay, :func:`~autograder.sandbox.kernel_time.seconds_waiting_for_a_core`): however loaded the
machine, computing alone never reaches them. (Where the system keeps no run delay, they
are plain wall-clock limits.)

Every such event is written, one JSON line each, to ``events_file`` (set by the grading
process): a submission that had one is graded again before anything is recorded (see
:mod:`autograder.batch.supervise`).

Course cells tagged ``demo`` (a long training run that only draws a picture) are not run:
no test depends on them, and grading should not pay for them. A cell tagged ``long`` (a
test that trains the student's model) may use half of ``notebook_timeout`` instead of
``timeout``. The tags come from the release (see
:class:`~autograder.submission.restore.RestoreCourseCells`), so a student can only skip or
lengthen cells of their own this way.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import math
import os
import signal
import time
from dataclasses import dataclass, field
from pathlib import Path

from nbclient.exceptions import CellTimeoutError, DeadKernelError
from nbclient.util import ensure_async, run_sync
from nbformat import NotebookNode
from nbformat.v4 import new_output
from nbgrader.preprocessors import Execute
from nbgrader.utils import is_grade
from traitlets import Integer, Unicode

from ..course.files import DEMO_TAG, LONG_TAG
from ..sandbox import kernel_time
from ..sandbox.kernel_client import exit_status
from .verdicts import (
    COMPUTED_TOO_LONG,
    KERNEL_DIED,
    KERNEL_STUCK,
    OUT_OF_TIME,
    OUT_OF_WALL_TIME,
    TIMED_OUT_ERROR,
    log_event,
)

DIED, STUCK = "died", "stuck"          # what a run's kernel did in a cell, if anything
# After an interrupt at a cell's limit, a kernel that computes this much more, or does not
# end within this many wall-clock seconds, is killed: it would not stop.
GRACE_CPU_SECONDS, GRACE_WALL_SECONDS = 5.0, 30.0
WATCH_INTERVAL = 0.1                   # seconds between two looks at the kernel's CPU time
# nbclient's own (plain) wall clock, when the watch keeps the wall-clock limits: a backstop
# this many times longer, in case the watch cannot see the kernel any more.
BACKSTOP_FACTOR = 5


class _KernelStuck(Exception):
    """A cell ran past its time limit and the kernel did not stop when interrupted."""


class _OutputLate(Exception):
    """A cell's reply came but its output did not follow in time (not the code's fault)."""


def describe_exit(code: int | None) -> str:
    """How a kernel process ended, in words: ``killed by signal 9 (SIGKILL)``."""
    if code is None:
        return "its process had not ended yet"
    if code < 0:
        return f"killed by signal {-code} ({_signal_name(-code)})"
    if code > 128:      # a sandbox reports its child's death by signal N as 128 + N
        return f"exit status {code} (signal {code - 128}, {_signal_name(code - 128)})"
    return f"exit status {code}"


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return "unknown signal"


@dataclass
class Crashes:
    """Who is charged with a kernel's death, across the runs of one notebook (the module's
    rule): the cells blamed (``{cell: (kind, what was seen)}``, the death reproduced), the
    cell suspected after the last run (``(cell, kind)``), and, once the runs allowed are
    spent, the cell from which every code cell gets an error (``(cell, what was seen)``)."""

    blamed: dict[int, tuple[str, str]] = field(default_factory=dict)
    suspect: tuple[int, str] | None = None
    skip_from: tuple[int, str] | None = None

    def charge(self, cell: int, kind: str, what: str, last_run: bool) -> bool:
        """Record that ``cell`` stopped a run (``kind``: :data:`DIED` or :data:`STUCK`);
        False when the runs allowed are spent and the cells were already skipped once."""
        if last_run:
            if self.skip_from is not None:
                return False
            self.skip_from = (cell, what)
        elif self.suspect == (cell, kind):          # the same again: the cell's doing
            self.blamed[cell] = (kind, what)
            self.suspect = None
        else:
            self.suspect = (cell, kind)
        return True

    def instead_of_running(self, index: int, cell: NotebookNode
                           ) -> tuple[str, str] | None | bool:
        """What cell ``index`` gets instead of running: an error (its name and reason),
        True to be left as it is, or None: it runs."""
        blamed = self.blamed.get(index)
        if blamed is not None and cell.cell_type == "code":
            kind, what = blamed
            name = KERNEL_STUCK if kind == STUCK else KERNEL_DIED
            return name, (f"this cell {what}, twice in a row, so the notebook was run again "
                          "without it")
        if self.skip_from is not None and index >= self.skip_from[0]:
            if cell.cell_type != "code":
                return True
            return KERNEL_DIED, (f"this cell {self.skip_from[1]}, and the notebook could not "
                                 "be run again" if index == self.skip_from[0] else
                                 "a cell before it kept stopping the kernel")
        return None


@dataclass
class CellRun:
    """One cell's run: its limits (see :meth:`ExecuteSurvivingCrashes.limits`) and what
    happened to it."""

    seconds: int                       # its limit of computing (or running), as said
    cpu_limit: float | None            # CPU seconds the watch allows (None: not watched)
    wall_limit: float | None           # seconds the watch allows, less waiting for a core
    nbclient_timeout: int              # nbclient's own clock (a backstop under a watch)
    timeout_error: dict                # the error the cell gets on nbclient's clock
    interrupted: bool = False          # by nbclient, at its clock
    seen: str = ""                     # how the kernel ended, if it died in the cell
    cpu_stopped: bool = False          # by the watch, at the CPU limit
    wait_stopped: bool = False         # by the watch, at the wall-clock limit
    killed: bool = False               # by the watch: it would not stop
    starved: float = 0.0               # seconds it waited for a core


@dataclass
class NotebookRun:
    """One run of the notebook, in a fresh kernel."""

    wall_budget: float | None          # seconds the run may take, less waiting for a core
    start: float = field(default_factory=time.monotonic)
    starved: float = 0.0               # seconds its cells waited for a core
    started: bool = False              # whether its first cell was reached
    running: int | None = None         # the cell running, if any
    cell: CellRun | None = None        # the last cell that ran, or runs
    kernel: int | None = None          # its kernel's pid, found at the first cell
    cpu_at_start: float = 0.0          # the kernel's CPU seconds then
    sees_waiting: bool = False         # whether the kernel's wait for a core is known

    def wall_elapsed(self) -> float:
        """Wall-clock seconds of this run, less those its kernel spent waiting for a core
        during its cells."""
        return time.monotonic() - self.start - self.starved


class ExecuteSurvivingCrashes(Execute):
    """nbgrader's Execute, except that a dead kernel costs only a cell that reproducibly
    killed it, and nothing when it did not (see the module's docstring).

    Its state is explicit: :class:`Crashes` across the runs of a notebook,
    :class:`NotebookRun` for one run, :class:`CellRun` for one cell's run (the limits
    :meth:`limits` sets it, which nbclient's clock and error follow).
    """

    max_fresh_runs = Integer(6, help="Fresh runs of the notebook allowed after a kernel "
                             "died, would not stop or failed to start").tag(config=True)
    notebook_timeout = Integer(0, help="Seconds one run of the notebook may take in all "
                               "(0: no limit); a cell may also take at most `timeout`").tag(
                                   config=True)
    events_file = Unicode("", help="File to append what went wrong to, one JSON line per "
                          "event (empty: nowhere)").tag(config=True)
    threads = Integer(1, help="Compute threads of the kernel: a limit of t seconds allows "
                      "t * threads CPU seconds").tag(config=True)
    kernel_uid = Integer(-1, help="The user the kernel runs as, if it has one of its own, to "
                         "find its process and watch its CPU time").tag(config=True)
    kernel_marker = Unicode("", help="Otherwise NAME=value in the kernel's environment, for "
                            "the same (neither: wall-clock limits only)").tag(config=True)
    wall_factor = Integer(3, help="Wall-clock limits are this many times the computing "
                          "limits (for code that waits without computing)").tag(config=True)
    # nbclient's 4 s for a cell's output to follow its reply is short on a loaded machine.
    iopub_timeout = Integer(15).tag(config=True)

    _crashes: Crashes | None = None
    _run: NotebookRun | None = None
    _notebook: str = ""

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None):
        pristine = copy.deepcopy(nb)
        self._crashes = Crashes()
        self._notebook = (resources or {}).get("nbgrader", {}).get("notebook", "")
        shutdown = self.shutdown_kernel
        failed_runs = 0
        while True:
            factor = self.wall_factor if self._watchable else 1
            self._run = NotebookRun(factor * self.notebook_timeout
                                    if self.notebook_timeout else None)
            self.shutdown_kernel = shutdown       # a stuck cell's run kills its kernel
            try:
                return super().preprocess(copy.deepcopy(pristine), resources, km)
            except (DeadKernelError, _KernelStuck, _OutputLate, RuntimeError,
                    TimeoutError) as error:
                failed_runs += 1
                self._after_failed_run(error, failed_runs > self.max_fresh_runs)

    def _after_failed_run(self, error: Exception, last_run: bool) -> None:
        """Decide what a failed run means: blame a cell (reproduced), suspect one, or
        nothing. After the last run allowed, the cell that stopped it and every cell
        after it get an error, and the notebook runs once more up to that cell; if that
        fails too, or the kernel failed outside a cell, ``error`` is raised."""
        run = self._run
        cell, seen = run.running, run.cell.seen if run.cell is not None else ""
        if isinstance(error, _OutputLate) or cell is None:
            where = ("before its first cell could run (start-up)" if not run.started
                     else "between two cells" if cell is None
                     else f"in cell {cell}: its output came late")
            self._event(f"the kernel failed {where}: {type(error).__name__}: "
                        f"{str(error)[:200]}; {seen}".rstrip("; "))
            if last_run:
                raise error
            return
        kind = STUCK if isinstance(error, _KernelStuck) else DIED
        what = ("ran past its time limit and did not stop when interrupted" if kind == STUCK
                else f"killed the kernel ({seen})")
        self._event(f"cell {cell} {what}")
        if not self._crashes.charge(cell, kind, what, last_run):
            raise error
        self.log.warning("The kernel %s in cell %d; running the notebook again", kind, cell)

    def _event(self, text: str) -> None:
        if self.events_file:
            log_event(Path(self.events_file), self._notebook, text)

    def _get_timeout(self, cell: NotebookNode | None) -> int | None:
        """nbclient's clock for the cell that runs: its :class:`CellRun`'s."""
        run = self._run
        if run is not None and run.running is not None and run.cell is not None:
            return run.cell.nbclient_timeout
        return super()._get_timeout(cell)

    async def _async_handle_timeout(self, timeout: int, cell: NotebookNode | None = None):
        cell_run = self._run.cell if self._run is not None else None
        if cell_run is None:
            return await super()._async_handle_timeout(timeout, cell)
        cell_run.interrupted = True
        await super()._async_handle_timeout(timeout, cell)     # interrupts (or raises)
        return {"content": {**cell_run.timeout_error, "status": "error"}}   # its own limit

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        run = self._run
        run.started = True
        instead = self._instead_of_running(cell, index)
        if instead is not None:
            return instead, resources
        run.running, cell_run = index, run.cell
        try:
            result = super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:
            self.shutdown_kernel = "immediate"       # kill it; do not wait for it
            if cell_run is not None and cell_run.interrupted:   # yet no end came back
                raise _KernelStuck(f"cell {index}") from None
            raise _OutputLate(f"cell {index}") from None
        except DeadKernelError:
            if cell_run is not None and cell_run.killed:   # by the watch: it would not stop
                raise _KernelStuck(f"cell {index}") from None
            if cell_run is not None:
                cell_run.seen = describe_exit(exit_status(self.km))
            raise
        if cell_run is not None:
            self._say_why_stopped(cell, cell_run)
        run.running = None
        return result

    def _instead_of_running(self, cell: NotebookNode, index: int) -> NotebookNode | None:
        """The cell as it is left instead of running: blamed or skipped (see
        :class:`Crashes`), a demonstration, or past the notebook's time limit. None: it
        runs, a code cell with its limits set (the run's :attr:`~NotebookRun.cell`)."""
        self._run.cell = None
        instead = self._crashes.instead_of_running(index, cell)
        if instead is True:
            return cell
        if instead is not None:
            return self._error(cell, *instead)
        if cell.cell_type != "code":
            return None
        if DEMO_TAG in cell.metadata.get("tags", []) and not is_grade(cell) \
                and not cell.metadata.get("nbgrader", {}).get("solution"):
            cell.outputs = [new_output("stream", name="stdout",
                                       text="(a demonstration: not run when grading)\n")]
            cell.execution_count = None
            return cell
        limits = self.limits(cell)
        if isinstance(limits, tuple):
            return self._error(cell, *limits)
        self._run.cell = limits
        return None

    @staticmethod
    def _say_why_stopped(cell: NotebookNode, cell_run: CellRun) -> None:
        """The error of a cell the watch stopped, at its CPU or its wall-clock limit."""
        if cell_run.cpu_stopped:
            reason = (f"the cell computed for more than its limit of {cell_run.seconds} s "
                      "and was stopped")
            cell.outputs.append(new_output("error", ename=COMPUTED_TOO_LONG, evalue=reason,
                                           traceback=[f"{COMPUTED_TOO_LONG}: {reason}"]))
        elif cell_run.wait_stopped:
            cell.outputs.append(new_output("error", **cell_run.timeout_error))

    def limits(self, cell: NotebookNode) -> CellRun | tuple[str, str]:
        """The limits of the code ``cell`` about to run (see the module), or why it may not
        run at all (the error's name and message)."""
        run = self._run
        if self._watchable and run.kernel is None:
            run.kernel = kernel_time.find_kernel(
                self.kernel_uid if self.kernel_uid >= 0 else None, self.kernel_marker)
            run.cpu_at_start = self._cpu() or 0.0
            run.sees_waiting = self._waiting() is not None
        seconds = self.timeout
        if LONG_TAG in cell.metadata.get("tags", []) and self.notebook_timeout:
            seconds = max(seconds, self.notebook_timeout // 2)
        computing = seconds * self.threads
        if self.notebook_timeout and run.kernel is not None:
            left = (self.notebook_timeout * self.threads
                    - ((self._cpu() or 0.0) - run.cpu_at_start))
            if left <= 0:
                return OUT_OF_TIME, (f"the notebook used up its time limit of "
                                     f"{self.notebook_timeout} s of computing before this cell "
                                     "could run")
            computing = min(computing, left)
        watched = run.kernel is not None
        wall = seconds * (self.wall_factor if watched else 1)
        if run.wall_budget is not None:
            remaining = run.wall_budget - run.wall_elapsed()
            if remaining <= 0:
                return OUT_OF_WALL_TIME, (f"the notebook used up its time limit of "
                                          f"{run.wall_budget} s before this cell could run")
            wall = min(wall, remaining) if wall else remaining
        # The watch keeps the wall-clock limit on a clock that stops while the kernel
        # waits for a core; nbclient's own clock is then only a backstop.
        wall_limit = wall if watched and run.sees_waiting else None
        backstop = BACKSTOP_FACTOR if wall_limit else 1
        nbclient_timeout = max(1, math.ceil(wall * backstop)) if wall else self.timeout
        what = "waited, without computing," if watched else "ran"
        shown = max(1, math.ceil(wall)) if wall else self.timeout
        reason = f"the cell {what} past its time limit of {shown} s and was stopped"
        return CellRun(seconds, computing if watched else None, wall_limit, nbclient_timeout,
                       {"ename": TIMED_OUT_ERROR, "evalue": reason,
                        "traceback": [f"{TIMED_OUT_ERROR}: {reason}"]})

    @property
    def _watchable(self) -> bool:
        """Whether the kernel can be found, to limit its cells by CPU time."""
        return self.kernel_uid >= 0 or bool(self.kernel_marker)

    @property
    def _kernel(self) -> int | None:
        """The pid of this run's kernel, once found."""
        return self._run.kernel if self._run is not None else None

    def _cpu(self) -> float | None:
        kernel = self._kernel
        return kernel_time.cpu_seconds(kernel) if kernel is not None else None

    def _waiting(self) -> float | None:
        """Seconds the kernel has waited for a core (None: unknown)."""
        kernel = self._kernel
        return kernel_time.seconds_waiting_for_a_core(kernel) if kernel is not None else None

    async def async_execute_cell(self, cell: NotebookNode, cell_index: int,
                                 execution_count: int | None = None,
                                 store_history: bool = True) -> NotebookNode:
        """nbclient's, with the cell's CPU time watched (see :meth:`_watch`)."""
        run = self._run
        cell_run = run.cell if run is not None and run.running == cell_index else None
        if cell.cell_type != "code" or cell_run is None or cell_run.cpu_limit is None:
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        watch = asyncio.ensure_future(self._watch(cell_run))
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        finally:
            watch.cancel()
            run.starved += cell_run.starved

    # nbclient makes its synchronous execute_cell from its own async_execute_cell.
    execute_cell = run_sync(async_execute_cell)

    async def _watch(self, cell_run: CellRun) -> None:
        """Interrupt the kernel once the cell has computed its CPU limit, or spent its
        wall-clock limit other than waiting for a core; kill it if it computes on
        regardless, or does not end, after the interrupt."""
        start, began, waited = self._cpu(), time.monotonic(), self._waiting()
        kernel = self._kernel

        def awake_since(moment: float) -> float:
            """Wall-clock seconds since ``moment``, less the cell's wait for a core
            since it began (at most: the wait before ``moment`` is subtracted too)."""
            now_waiting = self._waiting()
            if waited is not None and now_waiting is not None:
                cell_run.starved = max(cell_run.starved, now_waiting - waited)
            return time.monotonic() - moment - cell_run.starved

        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            now = self._cpu()
            if start is None or now is None:
                return
            awake = awake_since(began)
            if now - start >= cell_run.cpu_limit:
                cell_run.cpu_stopped = True
                break
            if cell_run.wall_limit is not None and awake >= cell_run.wall_limit:
                cell_run.wait_stopped = True
                break
        await ensure_async(self.km.interrupt_kernel())
        interrupted, starved_then, since = now, cell_run.starved, time.monotonic()
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            now = self._cpu()
            if now is None:
                return
            awake = awake_since(since) + starved_then   # the wait since the interrupt only
            if now - interrupted > GRACE_CPU_SECONDS or awake > GRACE_WALL_SECONDS:
                cell_run.killed = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(kernel, signal.SIGKILL)
                return

    @staticmethod
    def _error(cell: NotebookNode, name: str, reason: str) -> NotebookNode:
        cell.outputs = [new_output("error", ename=name, evalue=reason,
                                   traceback=[f"{name}: {reason}"])]
        cell.execution_count = None
        return cell
