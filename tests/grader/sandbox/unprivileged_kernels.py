"""Run by ``test_unprivileged_zygote.py`` as an unprivileged user: kernels forked by that
user's zygote, each asked to do what it must not be able to do. Prints one JSON object:

* ``planted``, ``seen``: a first kernel plants (see :func:`.kernel_probes.plant`), the
  next one, from the same zygote, looks (:data:`.kernel_probes.INSPECT`) and tries to
  signal, read, trace and mount;
* ``bomb``: a third forks sleeping children until it cannot;
* ``after``: a fourth, started once the third has ended, says it runs;
* ``zygote_alive``: whether the zygote survived them all.

    python -m tests.grader.sandbox.unprivileged_kernels LEFT_SLEEP
"""

from __future__ import annotations

import json
import sys
import threading

from autograder.sandbox import bubblewrap, zygote
from tests.grader.sandbox.kernel_probes import INSPECT, THREADS, one_after_another, plant

REACH_THE_ZYGOTE = '''
import ctypes, signal
for number in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGCHLD):
    try:
        os.kill(1, number)
    except OSError as error:
        print("signal", int(number), type(error).__name__)
for path in ("/proc/1/environ", "/proc/1/mem", "/proc/1/maps"):
    try:
        open(path, "rb").read(16)
        print("read", path, "done")
    except OSError as error:
        print("read", path, type(error).__name__)
try:
    print("descriptors", os.listdir("/proc/1/fd"))
except OSError as error:
    print("descriptors", type(error).__name__)
libc = ctypes.CDLL(None, use_errno=True)
print("ptrace", libc.ptrace(16, 1, 0, 0), ctypes.get_errno())          # PTRACE_ATTACH
print("mount", libc.mount(b"tmpfs", b"/submission", b"tmpfs", 0, None), ctypes.get_errno())
'''

FORK_BOMB = '''
import os, time
made = 0
for _ in range(400):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(60)
        os._exit(0)
    made += 1
print("forked", made)
'''


def main() -> None:
    left_sleep = sys.argv[1]
    kernels = zygote.for_this_thread()
    if kernels is None:
        print(json.dumps({"zygote": None}))
        return
    limits = bubblewrap.Limits(memory_bytes=5 * 1024**3, threads=2)
    findings = {"zygote": str(kernels.folder), **one_after_another(kernels, limits, [
        ("planted", "/marker/first", plant(left_sleep)),
        ("seen", "/marker/second",
         "print('PLANTED' in dir())\n" + INSPECT + THREADS + REACH_THE_ZYGOTE),
        ("bomb", "/marker/bomb", FORK_BOMB),
        ("after", "/marker/after", "print('running')")])}
    findings["zygote_alive"] = zygote._RUNNING[threading.get_ident()].alive()
    zygote.stop_all()
    print(json.dumps(findings))


if __name__ == "__main__":
    main()
