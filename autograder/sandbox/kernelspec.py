"""A Jupyter kernelspec whose kernel starts in the sandbox: cold, or forked by a zygote.

nbgrader starts a notebook's kernel by name; :func:`install` writes a kernelspec of that
name whose command starts the kernel confined (:func:`.bubblewrap.kernel_argv`) or asks
the grading thread's zygote for one (:class:`.zygote.Zygote`), and describes the kernel it
will get (:class:`SandboxKernel`) for whoever configures nbgrader to use it.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from .bubblewrap import SUBMISSION_VARIABLE, Limits, kernel_argv, require_tools, sandbox_uid
from .zygote import Zygote

KERNEL_NAME = "autograder-sandbox"


@dataclass(frozen=True)
class SandboxKernel:
    """The sandboxed kernel a kernelspec starts, as the grading side needs to know it."""

    jupyter_path: Path      # put first on JUPYTER_PATH while nbgrader runs
    kernel_name: str
    ipc_dir: Path           # the folder of its Jupyter sockets (ipc transport)
    folder: Path            # the folder the kernel works in, seen as /submission inside
    uid: int                # the kernel's own user (a root grader's), else -1
    marker: str             # VARIABLE=value in the environment of each of its processes
    threads: int            # its compute threads


def install(scratch: Path, workdir: Path, limits: Limits | None = None,
            ipc_dir: Path | None = None, zygote: Zygote | None = None) -> SandboxKernel:
    """Write the sandbox kernelspec under ``scratch``; the kernel it starts.

    ``workdir`` is the only folder the notebook may write (it sees it as ``/submission``).
    It must not be the folder nbgrader writes the graded notebook to: the grader runs as
    another user, and whatever the kernel leaves there (a link to the gradebook, say) must
    never be followed; the grader fills it from the notebook's folder before the kernel
    starts. ``ipc_dir`` holds the kernel's sockets (default: inside ``scratch``); a Unix
    socket's path may not exceed 107 bytes, so give a short folder when ``scratch`` is deep.

    With a ``zygote``, kernels are forked warm by it instead: the notebook's folder is the
    zygote's (``workdir`` then only names the submission, so that
    :func:`.reaping.reap` finds what it started), and so is the sockets' folder.
    """
    require_tools()
    limits = limits or Limits()
    spec_dir = scratch / "jupyter" / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True, exist_ok=True)
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
    return SandboxKernel(jupyter_path=scratch / "jupyter", kernel_name=KERNEL_NAME,
                         ipc_dir=ipc_dir, folder=folder,
                         uid=sandbox_uid() if os.geteuid() == 0 else -1,
                         marker=f"{SUBMISSION_VARIABLE}={workdir}", threads=limits.threads)
