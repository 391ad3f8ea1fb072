"""What a test asks a zygote's kernel to do and show, shared by the tests of a root
grader's zygotes (``test_zygote.py``) and of anyone else's (``unprivileged_kernels.py``,
run as an unprivileged user by ``test_unprivileged_zygote.py``)."""

from __future__ import annotations

import sys
from pathlib import Path

import nbformat
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpec

from autograder.sandbox import bubblewrap, zygote

INSPECT = '''
import os, resource, signal
status = dict(line.split(":", 1) for line in open("/proc/self/status"))
print("uid", os.getuid(), os.geteuid(), "caps", status["CapEff"].strip(),
      status["CapPrm"].strip(), status["CapBnd"].strip(), "nnp", status["NoNewPrivs"].strip())
print("limits", resource.getrlimit(resource.RLIMIT_AS)[0],
      resource.getrlimit(resource.RLIMIT_NPROC)[0])
print("cwd", os.getcwd(), "marker", os.environ.get("AUTOGRADER_SUBMISSION"))
print("tmp", sorted(os.listdir("/tmp")), "submission", sorted(os.listdir("/submission")))
print("root", sorted(os.listdir("/")))
try:
    os.kill(1, signal.SIGKILL)
    print("kill zygote: sent")
except OSError as error:
    print("kill zygote:", type(error).__name__)
'''

PLANT = '''
import os, subprocess
os.makedirs("/tmp/.ipython/profile_default/startup", exist_ok=True)
open("/tmp/.ipython/profile_default/startup/00-planted.py", "w").write("PLANTED = True\\n")
open("/tmp/planted", "w").write("x")
open("/submission/planted", "w").write("x")
subprocess.Popen(["sleep", "LEFT_SLEEP"])
print("planted")
'''


def plant(left_sleep: str) -> str:
    """Code that leaves what a next kernel must not meet: an IPython startup file and a
    file in /tmp, a file in its folder, and a background ``sleep left_sleep`` (a number of
    the calling test run's own: another run of the suite may grade on the same machine)."""
    return PLANT.replace("LEFT_SLEEP", left_sleep)


THREADS = """
import torch
print("threads", torch.get_num_threads(), os.environ["OMP_NUM_THREADS"])
"""


def environments_in_tmp() -> list[str]:
    """What a kernel's fresh /tmp shows of the Python environment, when the repository was
    cloned into /tmp (see zygote_server._fresh_tmp): the environment's top folder there."""
    found = set()
    for prefix in (sys.prefix, sys.base_prefix):
        parts = Path(prefix).resolve().parts
        if parts[:2] == ("/", "tmp") and len(parts) > 2:
            found.add(parts[2])
    return sorted(found)


def run_code(km: KernelManager, code: str) -> str:
    """What ``code`` printed, run in the kernel ``km``."""
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    printed = []
    client.execute_interactive(code, timeout=60, output_hook=lambda msg: printed.append(
        msg["content"].get("text", "")) if msg["msg_type"] == "stream" else None)
    client.stop_channels()
    return "".join(printed)


def start_kernel(z: zygote.Zygote, limits: bubblewrap.Limits, marker: str) -> KernelManager:
    """A kernel forked by the zygote ``z``, as a grading process asks for one."""
    km = KernelManager(transport="ipc", ip=str(z.sockets / "kernel"))
    km._kernel_spec = KernelSpec(
        argv=z.kernel_argv(bubblewrap.sandbox_uid(), limits, bubblewrap.SUBMISSION_VARIABLE,
                           marker),
        language="python", display_name="zygote", interrupt_mode="message")
    km.start_kernel()
    return km


def one_after_another(z: zygote.Zygote, limits: bubblewrap.Limits,
                      steps: list[tuple[str, str, str]]) -> dict[str, str]:
    """Kernels of the zygote ``z``, one after the other, each ended and the zygote cleared
    before the next, as a grading process uses them: ``steps`` are ``(name, marker, code)``;
    returns ``{name: what that kernel printed}``."""
    printed = {}
    for name, marker, code in steps:
        kernel = start_kernel(z, limits, marker)
        printed[name] = run_code(kernel, code)
        kernel.shutdown_kernel(now=True)
        z.clear()
    return printed


# A correct answer to attention-scoring that also prints the program of PID 1 of its
# sandbox: a zygote's (its ``python -c`` program begins ``import sys, types``) where the
# kernel was forked by one, the kernel itself where it started cold.
WHO_IS_PID_1 = '''
def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)


print("PID 1:", open("/proc/1/cmdline", "rb").read().split(b"\\0")[2][:60])
'''


def forked_by_a_zygote(graded: Path) -> bool:
    """Whether the graded notebook ``graded`` (answered with :data:`WHO_IS_PID_1`) ran in a
    kernel forked by a zygote."""
    notebook = nbformat.read(graded, as_version=4)
    printed = "".join(output.get("text", "") for cell in notebook.cells
                      for output in cell.get("outputs", []))
    return 'PID 1: b"import sys, types' in printed
