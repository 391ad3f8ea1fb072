"""The sandbox a submission's notebook runs in: a Jupyter kernel started by bubblewrap.

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

import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from traitlets.config import Config

if TYPE_CHECKING:
    from .zygote import Zygote

KERNEL_NAME = "autograder-sandbox"
# Where the notebook's folder appears inside the sandbox, whatever its path outside.
SANDBOX_FOLDER = "/submission"
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
    """The command that starts a kernel zygote (:mod:`autograder.zygote_server`) in a
    sandbox like a kernel's, serving requests on the inherited socket ``listener_fd``
    until the inherited pipe ``lifeline_fd`` ends (its grader is gone).

    Only a root grader runs one: the zygote stays root in its sandbox (it mounts, changes
    owners and users for each kernel it forks; see the module). Limits are set per kernel.
    """
    from . import zygote_server

    argv = _view(Limits().tmp_bytes, [])
    argv += ["--bind", str(workdir), zygote_server.SANDBOX_FOLDER,
             "--bind", str(ipc_dir), zygote_server.SANDBOX_SOCKETS,
             "--setenv", "HOME", "/tmp", "--setenv", "MPLCONFIGDIR", "/tmp",
             "--setenv", "MPLBACKEND", "Agg", "--chdir", "/",
             str(Path(sys.prefix) / "bin" / "python"), "-c",
             Path(zygote_server.__file__).read_text(), str(listener_fd),
             str(lifeline_fd)]
    return argv


def install(scratch: Path, workdir: Path, limits: Limits = Limits(),
            ipc_dir: Path | None = None, zygote: Zygote | None = None) -> tuple[Path, Config]:
    """Write the sandbox kernelspec under ``scratch``.

    Returns the folder to put first on ``JUPYTER_PATH`` and the nbgrader settings that run
    notebooks in the sandbox.

    ``workdir`` is the only folder the notebook may write (it sees it as ``/submission``).
    It must not be the folder nbgrader writes the graded notebook to: the grader runs as
    another user, and whatever the kernel leaves there (a link to the gradebook, say) must
    never be followed. :class:`~autograder.preprocessors.ShipHiddenCases` fills it from
    the notebook's folder before the kernel starts. ``ipc_dir`` holds the kernel's sockets
    (default: inside ``scratch``); a Unix socket's path may not exceed 107 bytes, so give
    a short folder when ``scratch`` is deep.

    With a ``zygote`` (:mod:`autograder.zygote`), kernels are forked warm by it instead:
    the notebook's folder is the zygote's (``workdir`` then only names the submission, so
    that :func:`reap` finds what it started), and so is the sockets' folder.
    """
    require_tools()
    spec_dir = scratch / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
    c = Config()
    if zygote is not None:
        ipc_dir, folder = zygote.sockets, zygote.workdir
        argv = zygote.kernel_argv(sandbox_uid(), limits, SUBMISSION_VARIABLE, str(workdir))
    else:
        ipc_dir, folder = ipc_dir or scratch / "kernel-sockets", workdir
        ipc_dir.mkdir(parents=True, exist_ok=True)
        argv = kernel_argv(workdir, ipc_dir, limits)
    # The kernel may be PID 1 of its namespace, where a signal from outside may not reach
    # it: interrupts (at a cell's time limit) go as messages, and the kernel signals itself.
    spec = {"argv": argv, "language": "python",
            "display_name": "Python 3 (autograder sandbox)", "interrupt_mode": "message"}
    (spec_dir / "kernel.json").write_text(json.dumps(spec, indent=1))

    # Cells are limited by the CPU time of the kernel (autograder.execute), found by its
    # own user (a root grader's kernels have one) or the marker in its environment.
    c.ExecuteSurvivingCrashes.kernel_uid = sandbox_uid() if os.geteuid() == 0 else -1
    c.ExecuteSurvivingCrashes.kernel_marker = f"{SUBMISSION_VARIABLE}={workdir}"
    c.ExecuteSurvivingCrashes.threads = limits.threads
    c.ShipHiddenCases.sandbox_folder = str(folder)
    c.JudgeHiddenTests.sandbox_folder = str(folder)
    c.Execute.kernel_name = KERNEL_NAME
    c.KernelManager.transport = "ipc"
    c.KernelManager.ip = str(ipc_dir / "kernel")
    c.Execute.kernel_manager_class = "autograder.kernel_client.ReadyKernelManager"
    # Once the last cell has answered, nothing of the kernel is wanted: it is killed, with
    # whatever it started (see reap), rather than asked to shut down and waited for.
    c.Execute.shutdown_kernel = "immediate"
    c.AsyncKernelManager.client_class = "autograder.kernel_client.ReadyKernelClient"
    return scratch / "jupyter", c


def _names(pid: str, marker: bytes) -> bool:
    """Whether process ``pid``'s command line or environment mentions ``marker``."""
    for part in ("cmdline", "environ"):
        try:
            if marker in Path(f"/proc/{pid}/{part}").read_bytes():
                return True
        except OSError:          # gone, or not ours to read
            continue
    return False


def _owned_by(pid: str, uid: int) -> bool:
    """Whether process ``pid`` runs as ``uid`` (real, effective or saved)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return str(uid) in line.split()[1:4]
    except OSError:
        pass
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
    return _kill_until_gone(lambda pid: _owned_by(pid, uid), patience)


def reap(folder: Path, patience: float = 10.0) -> list[int]:
    """Kill every process that names ``folder`` and wait until none is left.

    A sandbox's processes name the folder they grade: bubblewrap on its command line, the
    kernel and its children in :data:`SUBMISSION_VARIABLE`. They normally die with the
    worker (parent-death signals), but asynchronously; this makes "nothing outlives its
    grading" a guarantee rather than a race. Returns the pids that were still there.
    """
    marker = str(folder).encode()
    return _kill_until_gone(lambda pid: _names(pid, marker), patience)


def _kill_until_gone(chosen, patience: float) -> list[int]:
    """SIGKILL every process ``chosen(pid)`` picks until none is left (or ``patience``
    seconds have passed); the pids that were found."""
    found: set[int] = set()
    deadline = time.monotonic() + patience
    while True:
        alive = [int(pid) for pid in os.listdir("/proc")
                 if pid.isdigit() and int(pid) != os.getpid() and chosen(pid)]
        if not alive or time.monotonic() > deadline:
            return sorted(found)
        found.update(alive)
        for pid in alive:
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
        time.sleep(0.05)
