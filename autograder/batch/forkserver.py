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

import atexit
import ctypes
import json
import multiprocessing
import multiprocessing.forkserver
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from contextlib import suppress
from pathlib import Path

PRELOAD = ["autograder.batch.preload"]   # the grader, torch, and the work they do once
PACKAGE_PARENT = Path(__file__).resolve().parent.parent
BATCH_VARIABLE = "AUTOGRADER_WARM_BATCH"   # read by autograder.batch.preload
BATCH_WAIT = 60.0   # seconds a server started before the batch is known waits to learn it
_batch_file: Path | None = None


def _batch_description() -> Path:
    """The file that describes the batch to this process's fork server."""
    global _batch_file
    if _batch_file is None:
        folder = tempfile.mkdtemp(prefix="autograder-warm-")
        atexit.register(shutil.rmtree, folder, True)
        _batch_file = Path(folder) / "batch.json"
    return _batch_file


def server_log() -> Path:
    """The log of this process's fork server: when it waits for the batch, what it
    rehearsed, and why a rehearsal failed (its children then do that work themselves)."""
    return log_of(_batch_description())


def log_of(batch_description: Path) -> Path:
    """The fork server's log, beside the file that describes its batch."""
    return batch_description.with_name("server.log")


def prepare(root: Path, assignments: list[str], gradebook: Path) -> None:
    """Describe the batch the fork server prepares for: the course at ``root``, the
    ``assignments`` graded, and the ``gradebook`` (a snapshot) the graders read.

    The server computes those assignments' hidden-test references once and rehearses
    grading each of them (:func:`autograder.submission.child.rehearse`) before it forks any
    grading process. A server started earlier (:func:`start_server`) waits, once it has imported
    everything, for this description; a server that has started grading ignores it.
    Whatever the server did not prepare, each grading process does for itself.
    """
    path = _batch_description()
    partial = path.with_suffix(".partial")
    partial.write_text(json.dumps({"root": str(root), "assignments": assignments,
                                   "gradebook": str(gradebook)}))
    partial.replace(path)


def start_server() -> None:
    """Start the fork server now rather than with the first grading process: it imports
    in the background while this process sets the batch up, then prepares for the batch
    as soon as :func:`prepare` describes it."""
    if can_fork_warm():
        _context()
        os.environ[BATCH_VARIABLE] = str(_batch_description())
        try:          # the server inherits it; this process's other children do not
            multiprocessing.forkserver.ensure_running()
        finally:
            del os.environ[BATCH_VARIABLE]


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
    """Runs in the forked child: its own session, stderr to ``log``, then the grading."""
    die_with_parent()
    os.setsid()
    messages = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.dup2(messages, 2)
    os.dup2(os.open(os.devnull, os.O_WRONLY), 1)
    os.chdir(cwd)
    # Imported here, not above: the command line imports this module before anything
    # heavy, to start the server first; in the server, preload has imported it already.
    from ..submission.child import main

    main(argv)


class GradingProcess:
    """One submission's grading process: forked warm when possible, else a fresh interpreter.

    ``pid`` leads a session of its own, so ``kill`` ends it with everything it started
    outside the sandbox (the sandbox's processes are reaped by :mod:`autograder.sandbox.reaping`).
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
                         "from autograder.batch.forkserver import die_with_parent; "
                         f"die_with_parent({os.getpid()}); "
                         "from autograder.submission.child import main; main()")
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
