"""Kernel zygotes: sandboxes that stay up and fork each notebook a warm kernel.

A fresh sandboxed kernel per notebook costs an interpreter, IPython and ``import torch``
before the first cell runs: seconds of CPU, often more than the notebook's own tests. A
zygote (:mod:`.zygote_server`) pays them once, in a bubblewrap sandbox like a
kernel's, then forks a kernel for each notebook that asks — isolated as before (its own
user, limits, ``/tmp``, mount and IPC namespaces, no capabilities; nothing of the previous
notebook left running or in its folder), but started in milliseconds.

Each grading thread of a worker gets a zygote of its own (:func:`for_this_thread`), since a
zygote serves one notebook at a time: its folder — ``/submission`` in the sandbox — is
emptied and refilled for each. A root grader's kernels each get a user of their own;
any other grader's keep its uid, each in a user namespace of its own (see
:mod:`.zygote_server`). With ``AUTOGRADER_COLD_START`` or ``AUTOGRADER_COLD_KERNELS`` set,
or where a zygote fails its check, every kernel starts cold (:func:`.bubblewrap.kernel_argv`).
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import warnings
from dataclasses import dataclass
from pathlib import Path

from ..course.runtime import claim, clear_abandoned
from .bubblewrap import SUBMISSION_VARIABLE, Limits, require_tools, sandbox_uid, zygote_argv

CLIENT = Path(__file__).resolve().parent / "zygote_client.py"
PREFIX = "agz-"      # short: the sockets' paths inside may not exceed 107 bytes


@dataclass(frozen=True)
class Zygote:
    """A running zygote, as the grading processes that use it know it: its folder."""

    folder: Path

    @property
    def control(self) -> Path:
        """The socket it takes requests on (not in any sandbox's view)."""
        return self.folder / "control"

    @property
    def workdir(self) -> Path:
        """The folder its kernels see as ``/submission``."""
        return self.folder / "submission"

    @property
    def sockets(self) -> Path:
        """The folder of its kernels' Jupyter sockets."""
        return self.folder / "sockets"

    def kernel_argv(self, uid: int, limits: Limits, variable: str,
                    marker: str) -> list[str]:
        """The kernelspec command: ask this zygote for a kernel run as ``uid`` under
        ``limits``, with ``variable=marker`` in its environment (see :func:`.reaping.reap`)."""
        request = {"uid": uid, "tmp_bytes": limits.tmp_bytes, "marker_variable": variable,
                   "marker": marker, "threads": limits.threads,
                   "limits": {"memory_bytes": limits.memory_bytes,
                              "cpu_seconds": limits.cpu_seconds,
                              "file_bytes": limits.file_bytes, "open_files": limits.open_files,
                              "processes": limits.processes}}
        return [sys.executable, "-I", "-S", str(CLIENT), str(self.control),
                json.dumps(request), "{connection_file}"]

    def works(self, timeout: float = 120.0) -> tuple[bool, str]:
        """Whether this zygote can confine a kernel, and what the trial printed: it forks a
        child that goes through every step of a kernel's confinement, then exits instead
        of starting the kernel."""
        request = json.loads(self.kernel_argv(sandbox_uid(), Limits(),
                                              SUBMISSION_VARIABLE, "check")[-2])
        request.update(check=True, connection={"ip": "check"})
        errors, write_end = os.pipe()
        code = None
        try:
            with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as zygote, \
                    open(os.devnull, "r+b") as null:
                zygote.settimeout(timeout)
                zygote.connect(str(self.control))
                socket.send_fds(zygote, [json.dumps(request).encode()],
                                [null.fileno(), null.fileno(), write_end])
                os.close(write_end)
                write_end = None
                while code is None and (reply := zygote.recv(1 << 16)):
                    code = json.loads(reply).get("exit")
        except (OSError, ValueError) as error:
            return False, f"{type(error).__name__}: {error}"
        finally:
            if write_end is not None:
                os.close(write_end)
            with os.fdopen(errors, "rb") as printed:
                said = printed.read(4096).decode(errors="replace") if code is not None else ""
        return code == 0, said

    def clear(self) -> None:
        """Empty the notebook folder (between notebooks; its kernels must be gone).

        The folder itself stays: the sandbox has it mounted.
        """
        for path in self.workdir.iterdir():
            if path.is_dir() and not path.is_symlink():
                shutil.rmtree(path)
            else:
                path.unlink()


class ZygoteProcess:
    """A zygote this process started, in a sandbox of its own; stopped with :meth:`stop`."""

    def __init__(self) -> None:
        _clear_abandoned()
        self.zygote = Zygote(Path(tempfile.mkdtemp(prefix=PREFIX)))
        claim(self.zygote.folder)
        self.zygote.workdir.mkdir(mode=0o755)
        self.zygote.sockets.mkdir(mode=0o755)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        listener.bind(str(self.zygote.control))
        listener.listen(8)
        # The zygote ends when this pipe does: when this process ends, however it ends
        # (bubblewrap's parent-death signal alone left a zygote running after its grader).
        # Only this process holds the write end (not inherited by its other children).
        lifeline, self._lifeline = os.pipe()
        with (self.zygote.folder / "zygote.log").open("w") as log:
            self.process = subprocess.Popen(
                zygote_argv(self.zygote.workdir, self.zygote.sockets,
                                    listener.fileno(), lifeline),
                pass_fds=[listener.fileno(), lifeline], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=log, start_new_session=True)
        listener.close()
        os.close(lifeline)

    def alive(self) -> bool:
        return self.process.poll() is None

    def stop(self) -> None:
        if self.alive():
            self.process.kill()
        self.process.wait()
        if self._lifeline is not None:
            os.close(self._lifeline)
            self._lifeline = None
        shutil.rmtree(self.zygote.folder, ignore_errors=True)


def _clear_abandoned() -> None:
    """Remove the folders of zygotes whose grader is gone (killed, so no ``atexit``)."""
    clear_abandoned(Path(tempfile.gettempdir()).glob(f"{PREFIX}*"))


_RUNNING: dict[int, ZygoteProcess] = {}
_SPARE: list[ZygoteProcess] = []    # started ahead (prestart), for threads to claim
_LOCK = threading.Lock()
_BROKEN = threading.Event()     # a zygote failed its check: this process starts kernels cold


def available() -> bool:
    """Whether kernels may be forked from zygotes here."""
    return not (_BROKEN.is_set() or os.environ.get("AUTOGRADER_COLD_START")
                or os.environ.get("AUTOGRADER_COLD_KERNELS"))


def for_this_thread() -> Zygote | None:
    """This thread's zygote, started (or restarted, if it died) on demand; ``None`` where
    zygotes are not :func:`available` or a new one fails its check (kernels then start
    cold, and a warning says why)."""
    if not available():
        return None
    require_tools()
    thread = threading.get_ident()
    with _LOCK:
        running = _RUNNING.pop(thread, None)
    if running is not None and running.alive():
        with _LOCK:
            _RUNNING[thread] = running
        return running.zygote
    if running is not None:
        running.stop()
    with _LOCK:
        running = _SPARE.pop(0) if _SPARE else None
    if running is None or not running.alive():
        running = ZygoteProcess()
    works, said = running.zygote.works()
    if not works:
        log = (running.zygote.folder / "zygote.log").read_text(errors="replace")
        running.stop()
        _BROKEN.set()
        warnings.warn(f"kernel zygotes cannot confine kernels here, so every kernel starts "
                      f"cold:\n{said}{log[-2000:]}", RuntimeWarning, stacklevel=2)
        return None
    with _LOCK:
        _RUNNING[thread] = running
    return running.zygote


def prestart(count: int) -> None:
    """Start zygotes for ``count`` threads now, in the background (each imports torch for
    seconds): a batch starts them while it sets up, not when its first notebooks wait."""
    if not available():
        return
    require_tools()
    with _LOCK:
        while len(_SPARE) < count:
            _SPARE.append(ZygoteProcess())


@atexit.register
def stop_all() -> None:
    """Stop every zygote this process started."""
    with _LOCK:
        for running in [*_RUNNING.values(), *_SPARE]:
            running.stop()
        _RUNNING.clear()
        _SPARE.clear()
