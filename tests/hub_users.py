"""Real local users for the tests of the course's hub and exchange: created with
``useradd`` (a home of their own, mode 0700), run as with ``setpriv``, removed after."""

from __future__ import annotations

import os
import pwd
import secrets
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

BIN = Path(sys.executable).parent


def need_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("creates local users and runs as them: run the tests as root (CI does)")


@contextmanager
def local_users(count: int, prefix: str = "attn"):
    """``count`` new users named ``<prefix>-<random>-<n>``; removed with their homes after."""
    need_root()
    tag = secrets.token_hex(3)
    names = [f"{prefix}-{tag}-{n}" for n in range(1, count + 1)]
    try:
        for name in names:
            subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash",
                            "--key", "HOME_MODE=0700", name], check=True, capture_output=True)
            os.chmod(pwd.getpwnam(name).pw_dir, 0o700)
        yield names
    finally:
        for name in names:
            subprocess.run(["pkill", "-KILL", "-u", name], capture_output=True, check=False)
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)


def as_user(name: str, *command: str, cwd: str | Path | None = None, check: bool = True,
            timeout: int = 300) -> subprocess.CompletedProcess:
    """Run ``command`` as the local user ``name``, in their home (or ``cwd``), with a
    clean environment: what they could do in a terminal of their own."""
    entry = pwd.getpwnam(name)
    env = {"HOME": entry.pw_dir, "USER": name, "LOGNAME": name, "LANG": "C.UTF-8",
           "PATH": f"{BIN}:/usr/local/bin:/usr/bin:/bin"}
    done = subprocess.run(["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}",
                           "--init-groups", "--", *command],
                          cwd=cwd or entry.pw_dir, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)
    if check and done.returncode != 0:
        raise AssertionError(f"{' '.join(command)} as {name} failed ({done.returncode}):\n"
                             f"{done.stdout}\n{done.stderr}")
    return done


def give(name: str, path: Path, text: str) -> None:
    """Write ``text`` to ``path`` as if the user ``name`` had written it."""
    entry = pwd.getpwnam(name)
    path.write_text(text)
    os.chown(path, entry.pw_uid, entry.pw_gid)
