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


class ExecuteSurvivingCrashes(Execute):
    """nbgrader's Execute, except that a dead kernel costs only a cell that reproducibly
    killed it, and nothing when it did not (see the module's docstring)."""

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

    def preprocess(self, nb: NotebookNode, resources: dict | None = None, km=None):
        pristine = copy.deepcopy(nb)
        self._blamed: dict[int, tuple[str, str]] = {}    # cell -> (kind, what was seen)
        self._suspect: tuple[int, str] | None = None     # (cell, kind) of the last run
        self._skip_from: tuple[int, str] | None = None   # (cell, what was seen)
        self._cell_limit = self.timeout
        self._notebook = (resources or {}).get("nbgrader", {}).get("notebook", "")
        shutdown = self.shutdown_kernel
        failed_runs = 0
        while True:
            self._running: int | None = None
            self._started = False
            self._interrupted = False
            self._kernel: int | None = None              # its pid, found at the first cell
            self._run_cpu = 0.0                           # its CPU seconds then
            self._sees_waiting = False                    # whether its run delay is known
            factor = self.wall_factor if self._watchable else 1
            self._wall_budget = (factor * self.notebook_timeout
                                 if self.notebook_timeout else None)
            self._run_start, self._starved = time.monotonic(), 0.0
            self.shutdown_kernel = shutdown
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
        cell, seen = self._running, getattr(self, "_seen", "")
        if isinstance(error, _OutputLate) or cell is None:
            where = ("before its first cell could run (start-up)" if not self._started
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
        if last_run:
            if self._skip_from is not None:
                raise error
            self._skip_from = (cell, what)
        elif self._suspect == (cell, kind):          # the same again: the cell's doing
            self._blamed[cell] = (kind, what)
            self._suspect = None
        else:
            self._suspect = (cell, kind)
        self.log.warning("The kernel %s in cell %d; running the notebook again", kind, cell)

    def _event(self, text: str) -> None:
        if self.events_file:
            log_event(Path(self.events_file), self._notebook, text)

    async def _async_handle_timeout(self, timeout: int, cell: NotebookNode | None = None):
        self._interrupted = True
        return await super()._async_handle_timeout(timeout, cell)

    def preprocess_cell(self, cell: NotebookNode, resources: dict, index: int):
        self._started = True
        blamed = self._blamed.get(index)
        if blamed is not None and cell.cell_type == "code":
            kind, what = blamed
            name = KERNEL_STUCK if kind == STUCK else KERNEL_DIED
            reason = (f"this cell {what}, twice in a row, so the notebook was run again "
                      "without it")
            return self._error(cell, name, reason), resources
        if self._skip_from is not None and index >= self._skip_from[0]:
            if cell.cell_type == "code":
                reason = (f"this cell {self._skip_from[1]}, and the notebook could not be "
                          "run again" if index == self._skip_from[0] else
                          "a cell before it kept stopping the kernel")
                return self._error(cell, KERNEL_DIED, reason), resources
            return cell, resources
        if cell.cell_type == "code" and DEMO_TAG in cell.metadata.get("tags", []) \
                and not is_grade(cell) and not cell.metadata.get("nbgrader", {}).get("solution"):
            cell.outputs = [new_output("stream", name="stdout",
                                       text="(a demonstration: not run when grading)\n")]
            cell.execution_count = None
            return cell, resources
        if cell.cell_type == "code":
            out_of_time = self._set_limits(cell)
            if out_of_time:
                return self._error(cell, *out_of_time), resources
        self._running, self._interrupted, self._seen = index, False, ""
        self._cpu_stopped = self._wait_stopped = self._killed = False
        try:
            result = super().preprocess_cell(cell, resources, index)
        except CellTimeoutError:
            self.shutdown_kernel = "immediate"       # kill it; do not wait for it
            if self._interrupted:                    # interrupted, yet no end came back
                raise _KernelStuck(f"cell {index}") from None
            raise _OutputLate(f"cell {index}") from None
        except DeadKernelError:
            if self._killed:                         # by the watch: it would not stop
                raise _KernelStuck(f"cell {index}") from None
            self._seen = describe_exit(exit_status(self.km))
            raise
        if self._cpu_stopped:
            reason = (f"the cell computed for more than its limit of {self._cell_seconds} s "
                      "and was stopped")
            cell.outputs.append(new_output("error", ename=COMPUTED_TOO_LONG, evalue=reason,
                                           traceback=[f"{COMPUTED_TOO_LONG}: {reason}"]))
        elif self._wait_stopped:
            cell.outputs.append(new_output("error", **self.error_on_timeout))
        self._running = None
        return result

    def _set_limits(self, cell: NotebookNode) -> tuple[str, str] | None:
        """Set this cell's limits (see the module), or say why it may not run at all
        (the error's name and message)."""
        if self._watchable and self._kernel is None:
            self._kernel = kernel_time.find_kernel(
                self.kernel_uid if self.kernel_uid >= 0 else None, self.kernel_marker)
            self._run_cpu = self._cpu() or 0.0
            self._sees_waiting = self._waiting() is not None
        seconds = self._cell_limit
        if LONG_TAG in cell.metadata.get("tags", []) and self.notebook_timeout:
            seconds = max(seconds, self.notebook_timeout // 2)
        computing = seconds * self.threads
        if self.notebook_timeout and self._kernel is not None:
            left = self.notebook_timeout * self.threads - ((self._cpu() or 0.0) - self._run_cpu)
            if left <= 0:
                return OUT_OF_TIME, (f"the notebook used up its time limit of "
                                     f"{self.notebook_timeout} s of computing before this cell "
                                     "could run")
            computing = min(computing, left)
        watched = self._kernel is not None
        self._cell_seconds = seconds
        self._cpu_limit = computing if watched else None
        wall = seconds * (self.wall_factor if watched else 1)
        if self._wall_budget is not None:
            remaining = self._wall_budget - self._wall_elapsed()
            if remaining <= 0:
                return OUT_OF_WALL_TIME, (f"the notebook used up its time limit of "
                                          f"{self._wall_budget} s before this cell could run")
            wall = min(wall, remaining) if wall else remaining
        # The watch keeps the wall-clock limit on a clock that stops while the kernel
        # waits for a core; nbclient's own clock is then only a backstop.
        self._wall_limit = wall if watched and self._sees_waiting else None
        backstop = BACKSTOP_FACTOR if self._wall_limit else 1
        self.timeout = max(1, math.ceil(wall * backstop)) if wall else self.timeout
        what = "waited, without computing," if watched else "ran"
        shown = max(1, math.ceil(wall)) if wall else self.timeout
        reason = f"the cell {what} past its time limit of {shown} s and was stopped"
        self.error_on_timeout = {"ename": TIMED_OUT_ERROR, "evalue": reason,
                                 "traceback": [f"{TIMED_OUT_ERROR}: {reason}"]}
        return None

    @property
    def _watchable(self) -> bool:
        """Whether the kernel can be found, to limit its cells by CPU time."""
        return self.kernel_uid >= 0 or bool(self.kernel_marker)

    def _cpu(self) -> float | None:
        return kernel_time.cpu_seconds(self._kernel) if self._kernel is not None else None

    def _waiting(self) -> float | None:
        """Seconds the kernel has waited for a core (None: unknown)."""
        return (kernel_time.seconds_waiting_for_a_core(self._kernel)
                if self._kernel is not None else None)

    def _wall_elapsed(self) -> float:
        """Wall-clock seconds of this run of the notebook, less those its kernel spent
        waiting for a core during its cells."""
        return time.monotonic() - self._run_start - self._starved

    async def async_execute_cell(self, cell: NotebookNode, cell_index: int,
                                 execution_count: int | None = None,
                                 store_history: bool = True) -> NotebookNode:
        """nbclient's, with the cell's CPU time watched (see :meth:`_watch`)."""
        if cell.cell_type != "code" or getattr(self, "_cpu_limit", None) is None:
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        self._cell_starved = 0.0
        watch = asyncio.ensure_future(self._watch(self._cpu_limit))
        try:
            return await super().async_execute_cell(cell, cell_index, execution_count,
                                                    store_history)
        finally:
            watch.cancel()
            self._starved += self._cell_starved

    # nbclient makes its synchronous execute_cell from its own async_execute_cell.
    execute_cell = run_sync(async_execute_cell)

    async def _watch(self, limit: float) -> None:
        """Interrupt the kernel once the cell has computed ``limit`` CPU seconds, or
        spent its wall-clock limit other than waiting for a core; kill it if it computes on
        regardless, or does not end, after the interrupt."""
        start, began, waited = self._cpu(), time.monotonic(), self._waiting()

        def awake_since(moment: float) -> float:
            """Wall-clock seconds since ``moment``, less the cell's wait for a core
            since it began (at most: the wait before ``moment`` is subtracted too)."""
            now_waiting = self._waiting()
            if waited is not None and now_waiting is not None:
                self._cell_starved = max(self._cell_starved, now_waiting - waited)
            return time.monotonic() - moment - self._cell_starved

        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            now = self._cpu()
            if start is None or now is None:
                return
            awake = awake_since(began)
            if now - start >= limit:
                self._cpu_stopped = True
                break
            if self._wall_limit is not None and awake >= self._wall_limit:
                self._wait_stopped = True
                break
        await ensure_async(self.km.interrupt_kernel())
        interrupted, starved_then, since = now, self._cell_starved, time.monotonic()
        while True:
            await asyncio.sleep(WATCH_INTERVAL)
            now = self._cpu()
            if now is None:
                return
            awake = awake_since(since) + starved_then   # the wait since the interrupt only
            if now - interrupted > GRACE_CPU_SECONDS or awake > GRACE_WALL_SECONDS:
                self._killed = True
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(self._kernel, signal.SIGKILL)
                return

    @staticmethod
    def _error(cell: NotebookNode, name: str, reason: str) -> NotebookNode:
        cell.outputs = [new_output("error", ename=name, evalue=reason,
                                   traceback=[f"{name}: {reason}"])]
        cell.execution_count = None
        return cell
