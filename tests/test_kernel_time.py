"""Finding a sandbox's kernel and reading how much it has computed (autograder.kernel_time)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from autograder.kernel_time import cpu_seconds, find_kernel

# The "kernel" starts a child of its own (marked too, as its environment is inherited),
# computes for a while, then waits.
KERNEL = """
import subprocess, sys, time
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
start = time.process_time()
while time.process_time() - start < 0.6:
    pass
print("computed", flush=True)
time.sleep(60)
"""


def test_the_kernel_is_the_marked_process_whose_parent_is_not_and_its_cpu_time_counts():
    marker = f"AUTOGRADER_SUBMISSION=/tmp/kernel-time-test-{os.getpid()}"
    name, value = marker.split("=", 1)
    kernel = subprocess.Popen([sys.executable, "-c", KERNEL], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, name: value})
    try:
        assert kernel.stdout.readline().strip() == "computed"
        assert find_kernel(marker=marker) == kernel.pid
        assert find_kernel(marker=marker + "-another") is None
        used = cpu_seconds(kernel.pid)
        assert 0.5 <= used < 5, used
        time.sleep(0.3)                             # waiting costs no CPU time
        assert cpu_seconds(kernel.pid) - used < 0.1
    finally:
        kernel.kill()
        kernel.wait()
    assert cpu_seconds(kernel.pid) is None          # gone


def test_the_kernel_can_be_found_by_its_own_user():
    """A root grader's kernel runs as a user of its own, started by a root process."""
    if os.geteuid() != 0:
        pytest.skip("only a root grader gives kernels users of their own")
    uid = 100_000 + os.getpid()
    kernel = subprocess.Popen(["setpriv", f"--reuid={uid}", f"--regid={uid}", "--clear-groups",
                               "/bin/sh", "-c", "sleep 60 & echo up; sleep 60"],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert kernel.stdout.readline().strip() == "up"
        assert find_kernel(uid=uid) == kernel.pid       # not its child, run by the same user
        assert find_kernel(uid=uid + 1) is None
    finally:
        subprocess.run(["pkill", "-KILL", "-U", str(uid)], check=False)
        kernel.wait()
