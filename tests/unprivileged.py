"""The grader run by an unprivileged user, as an instructor runs it on a laptop: a real local
user of this machine (:func:`tests.hub_users.local_users`), with this suite's Python.

That Python may live where only root may go (pyenv under ``/root`` on the development
machine): the user is then shown it, read-only and nothing else of that folder, in a mount
namespace of the command's own (a small tmpfs over the closed folder, with the environment
bound into it). Nothing on the machine changes. A suite run by an unprivileged user runs
the command as itself.
"""

from __future__ import annotations

import os
import pwd
import shlex
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.conftest import REPO
from tests.hub_users import local_users


def _closed_above(path: Path) -> Path | None:
    """The outermost folder on the way to ``path`` that others may not enter, if any."""
    for folder in [*reversed(path.parents), path]:
        if not folder.stat().st_mode & 0o001:
            return folder
    return None


def _showing_the_python() -> list[str]:
    """Shell commands that, in a new mount namespace, make this Python reachable."""
    environments = sorted({Path(sys.prefix).resolve(), Path(sys.base_prefix).resolve()})
    closed = {path: above for path in environments if (above := _closed_above(path))}
    kept = [f"k{n}=$(mktemp -d) && mount --rbind {shlex.quote(str(path))} \"$k{n}\""
            for n, path in enumerate(closed)]
    covered = [f"mount -t tmpfs -o mode=0755,size=1m tmpfs {shlex.quote(str(above))}"
               for above in sorted(set(closed.values()))]
    shown = [f"mkdir -p {shlex.quote(str(path))} && mount --move \"$k{n}\" "
             f"{shlex.quote(str(path))} && rmdir \"$k{n}\"" for n, path in enumerate(closed)]
    return [*kept, *covered, *shown]


@contextmanager
def instructor() -> Iterator[str]:
    """The name of a new local user to grade as (removed after); this process's own user
    where it is not root."""
    if os.geteuid() != 0:
        yield pwd.getpwuid(os.geteuid()).pw_name
        return
    with local_users(1, prefix="grader") as (name,):
        yield name


def as_instructor(name: str, *command: str, cwd: Path = REPO, timeout: int = 600,
                  env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``command`` as the user ``name`` with this suite's Python reachable, in a clean
    environment (``env`` added) and with ``PYTHONPATH`` at the repository."""
    entry = pwd.getpwnam(name)
    environment = {"HOME": entry.pw_dir, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
                   "PATH": f"{Path(sys.executable).parent}:/usr/local/bin:/usr/bin:/bin",
                   "PYTHONPATH": str(REPO), "PYTHONDONTWRITEBYTECODE": "1", **(env or {})}
    if os.geteuid() != 0:
        argv = list(command)
    else:
        script = " && ".join([*_showing_the_python(),
                              f"exec setpriv --reuid={entry.pw_uid} --regid={entry.pw_gid} "
                              f"--init-groups -- \"$@\""])
        argv = ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh",
                *command]
    return subprocess.run(argv, cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=timeout, check=False)
