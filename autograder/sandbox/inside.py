"""What both sides of the sandbox share: where things appear inside it, and its processes.

Standard library only. The kernel zygote runs inside the sandbox as ``python -c``, where
this package is not in view, so :func:`autograder.sandbox.bubblewrap.zygote_argv` ships this
module's source ahead of the zygote server's; the grader imports it as a module.
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable

SANDBOX_FOLDER = "/submission"          # the notebook's folder, whatever its path outside
SANDBOX_SOCKETS = "/kernel-sockets"     # a zygote's kernels' sockets folder, inside


def process_uids(pid: int | str) -> tuple[int, ...]:
    """The real, effective and saved uid of process ``pid``; () if it is gone or hidden."""
    try:
        with open(f"/proc/{pid}/status") as status:
            for line in status:
                if line.startswith("Uid:"):
                    return tuple(int(uid) for uid in line.split()[1:4])
    except (OSError, ValueError):
        pass
    return ()


def other_processes() -> list[int]:
    """Every process this one can see, but itself."""
    return [int(name) for name in os.listdir("/proc")
            if name.isdigit() and int(name) != os.getpid()]


def kill_until_gone(chosen: Callable[[int], bool], patience: float = 10.0) -> list[int]:
    """SIGKILL every other process ``chosen(pid)`` picks until none is left, or until
    ``patience`` seconds have passed (0: one sweep); the pids that were found."""
    found: set[int] = set()
    deadline = time.monotonic() + patience
    while True:
        alive = [pid for pid in other_processes() if chosen(pid)]
        if alive:
            found.update(alive)
            for pid in alive:
                try:
                    os.kill(pid, signal.SIGKILL)
                except (ProcessLookupError, PermissionError):
                    pass
        if not alive or time.monotonic() > deadline:
            return sorted(found)
        time.sleep(0.05)
