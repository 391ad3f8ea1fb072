"""What the sandbox costs per notebook: a sandboxed kernel against a plain one, same run.

Starts a kernel, runs the cell every graded notebook starts with (``import torch``) and shuts
it down, ``--repeat`` times each way, alternating, and prints the medians and their ratio.

    python benchmarks/sandbox_cost.py [--repeat 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import tempfile
import time
from pathlib import Path

from jupyter_client import KernelManager

from autograder.sandbox import kernelspec


def run_once(kernel_name: str, **manager_options) -> float:
    """Seconds to start a kernel, import torch in it and shut it down."""
    started = time.perf_counter()
    manager = KernelManager(kernel_name=kernel_name, **manager_options)
    manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        reply = client.execute_interactive("import torch", timeout=60)
        assert reply["content"]["status"] == "ok", reply["content"]
    finally:
        client.stop_channels()
        manager.shutdown_kernel(now=True)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    plain, boxed = [], []
    for _ in range(args.repeat):
        plain.append(run_once("python3"))
        with tempfile.TemporaryDirectory() as scratch:
            workdir = Path(scratch) / "work"
            workdir.mkdir()
            jupyter_path = kernelspec.install(Path(scratch), workdir).jupyter_path
            os.environ["JUPYTER_PATH"] = str(jupyter_path)
            boxed.append(run_once(kernelspec.KERNEL_NAME, transport="ipc",
                                  ip=str(Path(scratch) / "kernel-sockets" / "kernel")))
            del os.environ["JUPYTER_PATH"]
    p, b = statistics.median(plain), statistics.median(boxed)
    print(f"kernel start + import torch + shutdown, median of {args.repeat} "
          f"({os.cpu_count()} cores)")
    print(f"  plain kernel      {p:6.2f} s")
    print(f"  sandboxed kernel  {b:6.2f} s")
    print(f"  sandbox cost      {b - p:+6.2f} s per notebook (ratio {b / p:.2f})")


if __name__ == "__main__":
    main()
