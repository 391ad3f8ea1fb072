"""The sandbox a submission's notebook runs in: a Jupyter kernel started by bubblewrap.

nbgrader runs the notebook in a kernel; here that kernel is started through ``prlimit``
and ``bwrap`` (Debian's ``bubblewrap``), so the student's code

* sees a file system of its own: the system's ``/usr`` and the Python environment,
  read-only, an empty ``/tmp``, and read-write only its own notebook's folder — not the
  course, the solutions, the gradebook or other students' work;
* has no network (an empty network namespace) and its own process tree (a PID namespace:
  anything it starts dies with the kernel), with every capability dropped;
* is limited in address space, CPU time, file size and open files.

The kernel talks to nbgrader over Unix sockets (Jupyter's ``ipc`` transport) in a folder
shared with the sandbox, since it has no network to share.
"""

from __future__ import annotations

import json
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from traitlets.config import Config

KERNEL_NAME = "autograder-sandbox"


class SandboxUnavailable(RuntimeError):
    """bubblewrap or prlimit is missing: grading would run student code unconfined."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one notebook's kernel."""

    memory_bytes: int = 6 * 1024**3     # address space; PyTorch reserves much of it unused
    cpu_seconds: int = 600
    file_bytes: int = 64 * 1024**2
    open_files: int = 256


def require_tools() -> None:
    missing = [tool for tool in ("bwrap", "prlimit") if shutil.which(tool) is None]
    if missing:
        raise SandboxUnavailable(
            f"{', '.join(missing)} not found: install Debian's bubblewrap and util-linux "
            "(`apt-get install bubblewrap`) to grade")


def kernel_argv(workdir: Path, ipc_dir: Path, limits: Limits) -> list[str]:
    """The command that starts a sandboxed kernel; ``{connection_file}`` is Jupyter's."""
    environments = sorted({str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())})
    argv = ["prlimit", f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}", "--core=0",
            "bwrap", "--die-with-parent", "--unshare-all", "--as-pid-1",
            "--cap-drop", "ALL",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
            "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
    for environment in environments:
        argv += ["--ro-bind", environment, environment]
    argv += ["--bind", str(workdir), str(workdir), "--bind", str(ipc_dir), str(ipc_dir),
             "--ro-bind", "{connection_file}", "{connection_file}",
             "--setenv", "HOME", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp",
             "--setenv", "MPLBACKEND", "Agg", "--chdir", str(workdir),
             str(Path(sys.prefix) / "bin" / "python"), "-m", "ipykernel_launcher",
             "-f", "{connection_file}"]
    return argv


def install(scratch: Path, workdir: Path, limits: Limits = Limits()) -> tuple[Path, Config]:
    """Write the sandbox kernelspec under ``scratch``.

    Returns the folder to put first on ``JUPYTER_PATH`` and the nbgrader settings that run
    notebooks in the sandbox.

    ``workdir`` is the only folder the notebook may write (nbgrader runs the notebook there);
    it must be the folder nbgrader creates for the autograded notebook.
    """
    require_tools()
    ipc_dir = scratch / "kernel-sockets"
    ipc_dir.mkdir(parents=True, exist_ok=True)
    spec_dir = scratch / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    # The kernel is PID 1 of its namespace, where a signal from outside may not reach it:
    # interrupts (at a cell's time limit) go as messages, and the kernel signals itself.
    spec = {"argv": kernel_argv(workdir, ipc_dir, limits), "language": "python",
            "display_name": "Python 3 (autograder sandbox)", "interrupt_mode": "message"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))

    c = Config()
    c.Execute.kernel_name = KERNEL_NAME
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = str(ipc_dir / "kernel")
    return scratch / "jupyter", c
