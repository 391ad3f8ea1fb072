"""The sandbox a submission's notebook runs in: the commands that start it with bubblewrap.

nbgrader runs the notebook in a kernel; here that kernel is started through ``prlimit``
and ``bwrap`` (Debian's ``bubblewrap``), so the student's code

* sees a file system of its own: the system's ``/usr`` and the Python environment,
  read-only, an empty ``/tmp``, and read-write only its own notebook's folder (seen as
  ``/submission``) — not the course, the solutions, the gradebook or other students' work;
* has no network (an empty network namespace) and its own process tree (a PID namespace:
  anything it starts dies with the kernel), with every capability dropped;
* is limited in address space, CPU time, file size, open files and processes;
* runs, when the grader is root, as an unprivileged user of its own (uid 100000 + the
  worker's pid, so no two sandboxes share one): the process limit then holds (Linux
  exempts root from it), and the kernel has no capability left.

The kernel talks to nbgrader over Unix sockets (Jupyter's ``ipc`` transport) in a folder
shared with the sandbox, since it has no network to share.
"""

from __future__ import annotations

import os
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path

from . import inside, zygote_server
from .inside import SANDBOX_FOLDER, SANDBOX_SOCKETS

# Set in every sandboxed process to the folder it grades, so a leftover can be traced.
SUBMISSION_VARIABLE = "AUTOGRADER_SUBMISSION"


class SandboxUnavailable(RuntimeError):
    """bubblewrap or prlimit is missing: grading would run student code unconfined."""


@dataclass(frozen=True)
class Limits:
    """Resource limits of one notebook's kernel."""

    memory_bytes: int = 6 * 1024**3     # address space; PyTorch reserves much of it unused
    tmp_bytes: int = 256 * 1024**2      # the sandbox's /tmp lives in memory: bounded
    cpu_seconds: int = 600
    file_bytes: int = 64 * 1024**2
    open_files: int = 256
    processes: int = 128               # processes and threads of the sandbox's user
    threads: int = 1                   # compute threads (torch, OpenMP, MKL): see below

    @staticmethod
    def threads_for(jobs: int) -> int:
        """Compute threads for each of ``jobs`` kernels running at once on this machine:
        its cores shared out. More would only make the kernels take turns, spinning."""
        return max(1, (os.cpu_count() or 1) // max(1, jobs))


THREAD_VARIABLES = ("OMP_NUM_THREADS", "MKL_NUM_THREADS")   # read by torch when imported


def require_tools() -> None:
    missing = [tool for tool in ("bwrap", "prlimit", "setpriv") if shutil.which(tool) is None]
    if missing:
        raise SandboxUnavailable(
            f"{', '.join(missing)} not found: install Debian's bubblewrap and util-linux "
            "(`apt-get install bubblewrap`) to grade")


def sandbox_uid(worker_pid: int | None = None) -> int:
    """The unprivileged user a root grader runs a worker's kernel as (default: this one's)."""
    return 100_000 + (os.getpid() if worker_pid is None else worker_pid)


def _kernel_command(ipc_dir: Path, limits: Limits) -> list[str]:
    """What runs inside bubblewrap: the kernel, as an unprivileged user if we are root.

    As root, bubblewrap creates no user namespace, so the sandbox starts as root: it hands
    the connection file, its folder and the sockets' folder to the sandbox's own user,
    then ``setpriv`` becomes that user with no capabilities before the kernel starts.
    Changing user clears the parent-death signal bubblewrap set (``--die-with-parent``), so
    ``setpriv`` sets it again: the kernel, and with it its PID namespace, dies with bwrap.
    """
    python = str(Path(sys.prefix) / "bin" / "python")
    kernel = ["prlimit", f"--nproc={limits.processes}", python, "-m", "ipykernel_launcher"]
    if os.geteuid() != 0:
        return [*kernel, "-f", "{connection_file}"]
    uid = sandbox_uid()
    script = ('cp "$1" /tmp/kernel.json && chown "$2:$2" /tmp /tmp/kernel.json && '
              'chown -R "$2:$2" "$3" "$4" && shift 4 && '
              'exec setpriv --reuid="$0" --regid="$0" --clear-groups --inh-caps=-all '
              '--bounding-set=-all --no-new-privs --pdeathsig KILL "$@" -f /tmp/kernel.json')
    return ["/bin/sh", "-c", script, str(uid), "{connection_file}", str(uid), SANDBOX_FOLDER,
            str(ipc_dir), *kernel]


def _namespaces() -> list[str]:
    if os.geteuid() == 0:     # no user namespace: the kernel gets its own uid instead
        return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts",
                "--unshare-cgroup-try"]
    return ["--unshare-all", "--cap-drop", "ALL"]


def _view(tmp_bytes: int, mount_points: list[str]) -> list[str]:
    """bubblewrap's file system: /usr and the Python environment read-only, /proc, /dev,
    a bounded /tmp, and the parents of ``mount_points``, traversable."""
    environments = sorted({str(Path(sys.prefix).resolve()), str(Path(sys.base_prefix).resolve())})
    argv = ["bwrap", "--die-with-parent", *_namespaces(), "--as-pid-1",
            "--ro-bind", "/usr", "/usr", "--symlink", "usr/bin", "/bin",
            "--symlink", "usr/lib", "/lib", "--symlink", "usr/lib64", "/lib64",
            "--symlink", "usr/sbin", "/sbin", "--ro-bind", "/etc/ld.so.cache", "/etc/ld.so.cache",
            "--proc", "/proc", "--dev", "/dev", "--size", str(tmp_bytes), "--tmpfs", "/tmp"]
    # Folders bwrap creates on the way to a mount point are private to root by default:
    # make them traversable, for the unprivileged user the kernel runs as.
    for target in [*environments, *mount_points]:
        for folder in reversed(Path(target).parents[:-1]):
            argv += ["--perms", "0755", "--dir", str(folder)]
    for environment in environments:
        argv += ["--ro-bind", environment, environment]
    return argv


def kernel_argv(workdir: Path, ipc_dir: Path, limits: Limits) -> list[str]:
    """The command that starts a sandboxed kernel; ``{connection_file}`` is Jupyter's."""
    argv = ["prlimit", f"--as={limits.memory_bytes}", f"--cpu={limits.cpu_seconds}",
            f"--fsize={limits.file_bytes}", f"--nofile={limits.open_files}", "--core=0",
            *_view(limits.tmp_bytes, [str(ipc_dir)])]
    argv += ["--bind", str(workdir), SANDBOX_FOLDER, "--bind", str(ipc_dir), str(ipc_dir),
             "--ro-bind", "{connection_file}", "{connection_file}",
             "--setenv", "HOME", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp",
             "--setenv", SUBMISSION_VARIABLE, str(workdir),
             "--setenv", "MPLBACKEND", "Agg", "--chdir", SANDBOX_FOLDER,
             *[part for variable in THREAD_VARIABLES
               for part in ("--setenv", variable, str(limits.threads))],
             *_kernel_command(ipc_dir, limits)]
    return argv


def zygote_argv(workdir: Path, ipc_dir: Path, listener_fd: int,
                lifeline_fd: int) -> list[str]:
    """The command that starts a kernel zygote (:mod:`.zygote_server`) in a sandbox like a
    kernel's, serving requests on the inherited socket ``listener_fd`` until the inherited
    pipe ``lifeline_fd`` ends (its grader is gone).

    A root grader's zygote stays root in its sandbox (it mounts, changes owners and users
    for each kernel it forks); anyone else's has no capability, like a cold kernel, and
    each kernel it forks makes a user namespace of its own (see the module). Limits are
    set per kernel.
    The package is not in the sandbox's view: the server's source runs as ``python -c``,
    with :mod:`.inside` made importable (as ``inside``) from its source first.
    """
    program = (
        "import sys, types\n"
        "inside = sys.modules['inside'] = types.ModuleType('inside')\n"
        f"exec(compile({Path(inside.__file__).read_text()!r}, 'inside.py', 'exec'), "
        "inside.__dict__)\n"
        f"exec(compile({Path(zygote_server.__file__).read_text()!r}, 'zygote_server.py', "
        "'exec'), {'__name__': '__main__'})\n")
    argv = _view(Limits().tmp_bytes, [])
    argv += ["--bind", str(workdir), SANDBOX_FOLDER, "--bind", str(ipc_dir), SANDBOX_SOCKETS,
             "--setenv", "HOME", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp",
             "--setenv", "MPLBACKEND", "Agg", "--chdir", "/",
             str(Path(sys.prefix) / "bin" / "python"), "-c", program, str(listener_fd),
             str(lifeline_fd)]
    return argv


