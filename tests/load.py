"""A machine under strain, for the grading stress test (tests/grader/batch/test_stress.py).

Each helper is a context manager that starts its strain in processes of its own and ends
it, whatever happened, when the block ends:

* :func:`busy_cores` keeps every core busy with spinning processes;
* :func:`memory_taken` holds a share of the machine's memory, touched, so it is resident;
* :func:`pauses` freezes grading's processes (``SIGSTOP``) at random moments for up to a
  few seconds each, as a machine that swaps or is starved does: kernels mid-cell, between
  a cell's reply and its output, while they start, and the grading processes themselves;
* ``pauses(..., births_only=True)`` freezes only every new kernel, as it starts: a
  start-up delayed on purpose;
* ``pauses(..., kills=True)`` instead kills one kernel of every grading process, once, at
  a random moment: a kernel that dies for no fault of the code (the out-of-memory killer
  of a crowded machine, say).

Nothing here changes the grader: it sees only what a loaded machine would do to it.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

SPIN = "while True: pass"


@contextlib.contextmanager
def busy_cores(processes: int | None = None) -> Iterator[None]:
    """``processes`` spinning processes (default: two per core), each in a session of its
    own — as the kernels of a book build are — so that Linux's per-session scheduling
    groups (autogroup) give each as large a share of the cores as a grading kernel."""
    count = processes or 2 * (os.cpu_count() or 1)
    spinners = [subprocess.Popen([sys.executable, "-c", SPIN], start_new_session=True)
                for _ in range(count)]
    try:
        yield
    finally:
        for spinner in spinners:
            spinner.kill()
            spinner.wait()


_HOLD = """
import sys, time
block = bytearray(int(sys.argv[1]))
for i in range(0, len(block), 4096):
    block[i] = 1
print("held", flush=True)
time.sleep(3600)
"""


@contextlib.contextmanager
def memory_taken(fraction: float) -> Iterator[int]:
    """Hold ``fraction`` of the machine's memory in another process; yields the bytes."""
    total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    size = int(total * fraction)
    holder = subprocess.Popen([sys.executable, "-c", _HOLD, str(size)], stdout=subprocess.PIPE,
                              text=True)
    try:
        assert holder.stdout.readline().strip() == "held", "could not take the memory"
        yield size
    finally:
        holder.kill()
        holder.wait()


_PAUSER = Path(__file__).with_name("pauser.py")


@contextlib.contextmanager
def pauses(course_root: Path, longest: float = 4.0, births_only: bool = False,
           kills: bool = False, seed: int = 0) -> Iterator[dict]:
    """Freeze (or kill) grading's processes for ``course_root`` at random (see the
    module). Yields a dict that says, once the block has ended, how many processes were
    ``frozen`` and ``killed``."""
    argv = [sys.executable, str(_PAUSER), str(course_root), str(longest), str(seed)]
    argv += ["--births-only"] if births_only else []
    argv += ["--kills"] if kills else []
    pauser = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
    done: dict = {}
    try:
        yield done
    finally:
        pauser.send_signal(signal.SIGTERM)       # it resumes whatever it froze, then ends
        said, _ = pauser.communicate(timeout=30)
        done.update(json.loads(said or "{}"))


def _environ(pid: int) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:
        return b""


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _uid(pid: int) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return None


def grading_processes(course_root: Path) -> tuple[set[int], set[int]]:
    """(kernels, grading processes) working for the course at ``course_root`` now.

    A grading process works in the course (its root or a scratch folder in it); its
    kernel runs as the user 100000 + the
    grading process's pid (a root grader), and has the submission's folder, inside the
    course's batch folder, in its environment as started (``AUTOGRADER_SUBMISSION``).
    """
    marker = f"AUTOGRADER_SUBMISSION={course_root}".encode()
    pids = [int(name) for name in os.listdir("/proc")
            if name.isdigit() and int(name) != os.getpid()]
    inside = (str(course_root), f"{course_root}/")
    graders = {pid for pid in pids
               if _cwd(pid) == inside[0] or _cwd(pid).startswith(inside[1])}
    users = {100_000 + pid for pid in graders}
    kernels = {pid for pid in pids
               if pid not in graders and (marker in _environ(pid) or _uid(pid) in users)}
    return kernels, graders


def freeze_at_random(course_root: Path, longest: float, births_only: bool, seed: int,
                     kills: bool = False) -> None:
    """The pauser's loop (run by tests/pauser.py until SIGTERM)."""
    chooser = random.Random(seed)
    frozen: dict[int, float] = {}          # pid -> when to resume it
    seen: set[int] = set()
    killed_for: set[int] = set()           # grading processes whose kernel was killed
    times_frozen = 0
    stopping = False

    def stop(*_):
        nonlocal stopping
        stopping = True

    signal.signal(signal.SIGTERM, stop)
    try:
        while not stopping:
            now = time.monotonic()
            for pid, until in list(frozen.items()):
                if now >= until:
                    with contextlib.suppress(ProcessLookupError):
                        os.kill(pid, signal.SIGCONT)
                    del frozen[pid]
            kernels, graders = grading_processes(course_root)
            if kills:
                for grader in graders - killed_for:
                    theirs = [pid for pid in kernels if _uid(pid) == 100_000 + grader]
                    if theirs and chooser.random() < 0.2:
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(min(theirs), signal.SIGKILL)
                        killed_for.add(grader)
                time.sleep(0.1)
                continue
            if births_only:
                candidates = [pid for pid in kernels if pid not in seen]
                seen |= kernels
            else:
                candidates = [pid for pid in kernels | graders
                              if pid not in frozen and chooser.random() < 0.05]
            for pid in candidates:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGSTOP)
                    frozen[pid] = now + chooser.uniform(0.5 if births_only else 0.1, longest)
                    times_frozen += 1
            time.sleep(0.1)
    finally:
        for pid in frozen:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGCONT)
        print(json.dumps({"frozen": times_frozen, "killed": len(killed_for)}), flush=True)
