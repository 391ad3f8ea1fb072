"""The local cluster's workers are threads of the grading process: a stall of the process
must not cost it its workers (a batch of ``make test-full`` once hung so)."""

from __future__ import annotations

import ctypes
import time

import dask
from distributed import as_completed, wait

from autograder.batch.cluster import dask_client


def test_a_stalled_grader_keeps_its_local_workers():
    """The process stalls (the GIL held 8 s, as a long computation in C holds it) longer
    than the scheduler's worker TTL (here 1 s; five minutes by default): every submission
    is still graded. With the TTL in force, the scheduler removes both workers when it wakes
    and the rest wait for ever (this test then fails at its 60-s wait)."""
    with dask.config.set({"distributed.scheduler.worker-ttl": "1s"}), \
            dask_client(2) as client:
        futures = [client.submit(time.sleep, 2, pure=False) for _ in range(6)]
        next(iter(as_completed(futures)))
        ctypes.PyDLL(None).sleep(8)           # libc's sleep, with the GIL held
        done, not_done = wait(futures, timeout=60)
        assert not not_done, "submissions lost with the workers"
        assert len(client.scheduler_info()["workers"]) == 2
