"""How much a sandboxed kernel has computed: the CPU time its process used.

A cell's time limit measured on the wall clock punishes correct code on a loaded machine:
the same cell takes twice as long when another process competes for the cores (a cold
kernel's ``import torch`` took 2 s alone and 3 s beside eight busy threads here, and
several times that under a book build). CPU time does not grow with the load, so
:class:`~autograder.submission.execute.ExecuteSurvivingCrashes` limits cells by it, and keeps a
wall-clock limit several times longer only for code that waits without computing — a
wall clock that stops while the kernel waits for a core (its run delay), since under a
heavy enough load even a limit several times longer is reached by code that computes.

The kernel is found as the process of its sandbox whose parent is not: for a root grader,
the processes of the sandbox's own user (each kernel runs as a user of its own); otherwise
those whose environment, as they were started, holds the marker its sandbox sets
(``AUTOGRADER_SUBMISSION=<folder>``, see :mod:`autograder.sandbox`). Its CPU time counts
all its threads and the children it has reaped.
"""

from __future__ import annotations

import os
from pathlib import Path

_TICKS = os.sysconf("SC_CLK_TCK")


def _environ(pid: str) -> bytes:
    try:
        return Path(f"/proc/{pid}/environ").read_bytes()
    except OSError:            # gone, or not ours to read
        return b""


def _stat(pid: int | str) -> list[str] | None:
    """The fields of ``/proc/PID/stat`` after the command name, or None if it is gone."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return text[text.rindex(")") + 2:].split()


def _uid(pid: str) -> int | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def find_kernel(uid: int | None = None, marker: str = "") -> int | None:
    """The pid of the kernel a sandbox started: the process run by ``uid`` whose parent
    is not, or else the process whose environment holds ``marker`` (``NAME=value``) and
    whose parent's does not. None if there is none."""
    wanted = b"\0" + marker.encode() + b"\0"
    found = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        if uid is not None and _uid(pid) != uid:
            continue
        if uid is None and (not marker or wanted not in b"\0" + _environ(pid)):
            continue
        fields = _stat(pid)
        if fields is not None:
            found[int(pid)] = int(fields[1])         # its parent
    roots = sorted(pid for pid, parent in found.items() if parent not in found)
    return roots[0] if roots else None


def cpu_seconds(pid: int) -> float | None:
    """CPU seconds (user and system) process ``pid`` and its reaped children used, or
    None if it is gone."""
    fields = _stat(pid)
    if fields is None:
        return None
    # utime, stime, cutime, cstime: fields 14-17 of stat, 12-15 after the name
    return sum(int(value) for value in fields[11:15]) / _TICKS


def seconds_waiting_for_a_core(pid: int) -> float | None:
    """Seconds the main thread of process ``pid`` (the one that runs a cell's Python)
    has spent ready to run but waiting for a core, since it started; None if it is gone
    or the system does not keep the count (``/proc/PID/schedstat``, Linux's run delay).

    A wall-clock limit less this time counts only what the code did itself — computing,
    or waiting for something other than a core (a sleep, a lock, input) — so that a
    loaded machine, which makes every process wait longer for a core, does not stop
    correct code at a wall-clock limit.
    """
    try:
        fields = Path(f"/proc/{pid}/schedstat").read_text().split()
        return int(fields[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None
