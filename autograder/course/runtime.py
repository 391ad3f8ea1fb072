"""What a running grader sets up: the folders it owns, and this environment's tools on PATH.

Folders are marked with the grader's pid and removed once it is gone.

A grader killed with ``kill -9`` runs no clean-up; whatever folder it worked in names it
(``owner.pid``), so that the next grader can tell an abandoned folder from a busy one.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Iterable
from pathlib import Path

OWNER_FILE = "owner.pid"


def claim(folder: Path) -> None:
    """Mark ``folder`` as this process's."""
    (folder / OWNER_FILE).write_text(str(os.getpid()))


def is_abandoned(folder: Path) -> bool:
    """Whether ``folder`` was claimed by a process that is gone; a folder not (yet) claimed,
    or whose mark cannot be read, is not abandoned."""
    try:
        owner = int((folder / OWNER_FILE).read_text())
    except (OSError, ValueError):
        return False
    return not Path(f"/proc/{owner}").exists()


def clear_abandoned(folders: Iterable[Path]) -> list[Path]:
    """Remove every abandoned folder among ``folders``; the ones removed."""
    removed = [folder for folder in folders if is_abandoned(folder)]
    for folder in removed:
        shutil.rmtree(folder, ignore_errors=True)
    return removed


def put_interpreter_on_path() -> None:
    """Put this environment's ``bin`` first on PATH: nbgrader runs ``alembic`` (gradebook
    migrations) from PATH, which may not be this environment's if it is not activated."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
