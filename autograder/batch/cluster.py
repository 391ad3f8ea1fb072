"""Where a batch's submissions are graded: a Dask cluster, local or existing."""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import dask
from distributed import Client, LocalCluster


@contextlib.contextmanager
def dask_client(jobs: int, scheduler: str | None = None) -> Iterator:
    """A Dask client: to the cluster at ``scheduler``, or to a local cluster of ``jobs``
    single-threaded workers in this process.

    A local worker only waits: each submission is graded in a process of its own (forked
    warm from :mod:`.forkserver`, its kernels from :mod:`autograder.sandbox.zygote`), so worker
    processes would only add their start-up (an interpreter importing nbgrader each) to
    every batch. Everything grading starts dies with this process (parent-death signals).
    """
    if scheduler:
        with Client(scheduler) as client:
            yield client
        return
    # A worker gets a submission only when it is free (Dask's default hands each one a
    # second to queue, which may wait behind a slow notebook until another steals it).
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0}), \
            LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=False,
                         dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client
