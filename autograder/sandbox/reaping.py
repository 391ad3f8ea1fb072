"""Nothing a submission started outlives its grading: its processes, found and killed.

A sandbox's processes name the folder they grade (bubblewrap on its command line, the
kernel and its children in :data:`~.bubblewrap.SUBMISSION_VARIABLE`), and under a root
grader they run as the sandbox's own user. They normally die with the grading process
(parent-death signals), but asynchronously; :func:`reap` and :func:`reap_user` make
"nothing outlives its grading" a guarantee rather than a race.
"""

from __future__ import annotations

import os
from pathlib import Path

from .inside import kill_until_gone, process_uids


def _names(pid: int, marker: bytes) -> bool:
    """Whether process ``pid``'s command line or environment mentions ``marker``."""
    for part in ("cmdline", "environ"):
        try:
            if marker in Path(f"/proc/{pid}/{part}").read_bytes():
                return True
        except OSError:          # gone, or not ours to read
            continue
    return False


def reap_user(uid: int, patience: float = 10.0) -> list[int]:
    """Kill every process of the sandbox user ``uid`` and wait until none is left.

    Whatever a submission started runs as its sandbox's own user, even a process that
    cleared its environment and left the sandbox's process tree (the kernel is PID 1 of
    its namespace; killed from outside, its children are adopted by the host's init).
    Only root grades with a user of its own; for anyone else this does nothing.
    """
    if os.geteuid() != 0 or uid < 100_000:
        return []
    return kill_until_gone(lambda pid: uid in process_uids(pid), patience)


def reap(folder: Path, patience: float = 10.0) -> list[int]:
    """Kill every process that names ``folder`` and wait until none is left; the pids that
    were still there."""
    marker = str(folder).encode()
    return kill_until_gone(lambda pid: _names(pid, marker), patience)
