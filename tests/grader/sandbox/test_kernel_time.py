"""Finding a sandbox's kernel and reading how much it has computed (its kernel_time)."""

from __future__ import annotations

import os
import subprocess
import sys
import time

import pytest

from autograder.sandbox.kernel_time import cpu_seconds, find_kernel, seconds_waiting_for_a_core

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


def test_the_time_a_process_waits_for_a_core_is_counted_apart_from_what_it_does():
    """Three spinning processes on one core: each computes about a third of the wall-clock
    time and waits for the core most of the rest (its run delay), while a sleeping process
    waits for nothing but its sleep."""
    if seconds_waiting_for_a_core(os.getpid()) is None:
        pytest.skip("this system keeps no run delay (/proc/PID/schedstat)")
    core = min(os.sched_getaffinity(0))
    spin = (f"import os; os.sched_setaffinity(0, {{{core}}}); print(1, flush=True)\n"
            "while True: pass")
    spinners = [subprocess.Popen([sys.executable, "-c", spin], stdout=subprocess.PIPE)
                for _ in range(3)]
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        for spinner in spinners:
            spinner.stdout.readline()
        before = [(cpu_seconds(p.pid), seconds_waiting_for_a_core(p.pid)) for p in spinners]
        slept = seconds_waiting_for_a_core(sleeper.pid)
        time.sleep(1.5)
        for spinner, (cpu, waited) in zip(spinners, before, strict=True):
            computed = cpu_seconds(spinner.pid) - cpu
            waiting = seconds_waiting_for_a_core(spinner.pid) - waited
            assert waiting > 0.5 and computed + waiting > 1.2, (computed, waiting)
        assert seconds_waiting_for_a_core(sleeper.pid) - slept < 0.2
    finally:
        for process in [*spinners, sleeper]:
            process.kill()
            process.wait()
    assert seconds_waiting_for_a_core(sleeper.pid) is None          # gone
