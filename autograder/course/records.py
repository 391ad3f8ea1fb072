"""The course's JSON records (``lms-roster.json``, ``lti-ledger.json``): read whole, written
whole and atomically, and changed under a lock of their own.

More than one process changes a record: on a hub, the hub remembers the LMS identity of a
student who launches while the grading service reads the LMS's class list into the same
roster, and an instructor's ``collect`` or ``export --lti-sync`` may run beside both. A
record is therefore only changed inside :func:`updating`: an exclusive ``flock`` on a lock
file beside it (``<record>.lock``, never replaced, so every process locks the same file), the
record read after the lock is held, and written back before it is released — nothing one
process remembered is lost to another's older copy. A reader that changes nothing needs no
lock: a record is replaced whole (``os.replace``), so it is never seen half written.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

RECORD_MODE = 0o600          # identities and grades: the course owner's only


def read_record(path: Path) -> dict:
    """The record at ``path``; empty if there is none yet."""
    if not path.exists():
        return {}
    return json.loads(path.read_text(encoding="utf-8"))


def write_record(path: Path, record: dict) -> None:
    """Replace the record at ``path`` with ``record``, whole: written to ``<name>.partial``
    (mode 0600) and renamed over it."""
    partial = path.with_name(path.name + ".partial")
    descriptor = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, RECORD_MODE)
    with os.fdopen(descriptor, "w", encoding="utf-8") as handle:
        json.dump(record, handle, ensure_ascii=False, indent=1, sort_keys=True)
        handle.write("\n")
    os.chmod(partial, RECORD_MODE)     # a partial left by an older version kept its mode
    os.replace(partial, path)


@contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock of the record at ``path`` (blocking until it is free)."""
    descriptor = os.open(path.with_name(path.name + ".lock"), os.O_RDONLY | os.O_CREAT,
                         RECORD_MODE)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX)
        yield
    finally:
        os.close(descriptor)           # releases the lock


@contextmanager
def updating(path: Path) -> Iterator[dict]:
    """The record at ``path``, read under its lock; written back, if changed, before the
    lock is released. An exception inside leaves the record as it was."""
    with locked(path):
        record = read_record(path)
        before = json.dumps(record, sort_keys=True)
        yield record
        if json.dumps(record, sort_keys=True) != before:
            write_record(path, record)
