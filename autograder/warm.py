"""Grading processes started warm: forked from a server that imported the grader once.

Starting a fresh interpreter for each submission and importing nbgrader, the hidden-test
machinery and torch costs seconds of CPU — more than many notebooks' own tests. Each grading
worker (a Dask worker) therefore starts one :mod:`multiprocessing` fork server with those
modules preloaded, and grades every submission in a fresh child forked from it: still a
process of its own, in a session of its own (a crash, a hang or a kill costs that submission
only), but started in milliseconds. The student's code never runs in these processes — it
runs in the sandboxed kernel the child starts (:mod:`autograder.sandbox`).

A daemonic worker (some clusters start Dask workers that way) may not fork children
through :mod:`multiprocessing`; there a child is a fresh interpreter, as before — and
everywhere if the environment variable ``AUTOGRADER_COLD_START`` is set (benchmarks
compare the two).
"""

from __future__ import annotations

import ctypes
import multiprocessing
import multiprocessing.forkserver
import os
import signal
import subprocess
import sys
from contextlib import suppress
from pathlib import Path

PRELOAD = ["autograder.warmup"]      # the grader, torch, and the work they do once
PACKAGE_PARENT = Path(__file__).resolve().parent.parent
SUITES_VARIABLE = "AUTOGRADER_WARM_SUITES"   # read by autograder.warmup


def prepare(suites: list[Path]) -> None:
    """Name the hidden-test suites whose references the fork server computes once.

    Takes effect if the server has not started yet (it starts with :func:`start_server`
    or the first grading process of this process); any other suite is computed by each
    grading process.
    """
    os.environ[SUITES_VARIABLE] = os.pathsep.join(str(suite) for suite in suites)


def start_server() -> None:
    """Start the fork server now rather than with the first grading process: it imports
    and computes its preload in the background while the batch sets up."""
    if can_fork_warm():
        _context()
        multiprocessing.forkserver.ensure_running()


def can_fork_warm() -> bool:
    """Whether this process may, and is meant to, fork grading processes warm."""
    return not (multiprocessing.current_process().daemon
                or os.environ.get("AUTOGRADER_COLD_START"))


def _context():
    context = multiprocessing.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context


def die_with_parent(parent: int | None = None) -> None:
    """Be killed when ``parent`` (default: the current parent) ends — a grader killed with
    ``kill -9`` leaves no grading running: its fork server exits, then its children die."""
    parent = os.getppid() if parent is None else parent
    ctypes.CDLL(None).prctl(1, signal.SIGKILL)      # PR_SET_PDEATHSIG
    if os.getppid() != parent:                      # it ended before we asked
        os._exit(1)


def _child(argv: list[str], cwd: str, log: str) -> None:
    """Runs in the forked child: its own session, stderr to ``log``, then the worker."""
    die_with_parent()
    os.setsid()
    messages = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(messages, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.chdir(cwd)
    from autograder.worker import main

    main(argv)


class GradingProcess:
    """One submission's grading process: forked warm when possible, else a fresh interpreter.

    ``pid`` leads a session of its own, so ``kill`` ends it with everything it started
    outside the sandbox (the sandbox's processes are reaped by :mod:`autograder.sandbox`).
    """

    def __init__(self, argv: list[str], cwd: Path, log: Path, warm: bool | None = None):
        self.warm = can_fork_warm() if warm is None else warm
        if self.warm:
            self._process = _context().Process(target=_child, args=(argv, str(cwd), str(log)),
                                               daemon=False, name="autograder-grading")
            self._process.start()
            self.pid = self._process.pid
        else:
            bootstrap = (f"import sys; sys.path.insert(0, {str(PACKAGE_PARENT)!r}); "
                         "from autograder.warm import die_with_parent; "
                         f"die_with_parent({os.getpid()}); "
                         "from autograder.worker import main; main()")
            with log.open("w") as messages:
                self._popen = subprocess.Popen([sys.executable, "-c", bootstrap, *argv],
                                               cwd=cwd, stdout=subprocess.DEVNULL,
                                               stderr=messages, start_new_session=True)
            self.pid = self._popen.pid

    def wait(self, timeout: float) -> int:
        """The exit code; raises :class:`subprocess.TimeoutExpired` after ``timeout`` s."""
        if not self.warm:
            return self._popen.wait(timeout=timeout)
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired("grading", timeout)
        return self._process.exitcode

    def kill(self) -> None:
        """Kill the process's session, then the process itself, and wait for it."""
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pid, signal.SIGKILL)
        if self.warm:
            with suppress(ProcessLookupError):
                self._process.kill()
            self._process.join()
            self._process.close()
        else:
            with suppress(ProcessLookupError):
                self._popen.kill()
            self._popen.wait()
