"""Where a batch's submissions are graded: a Dask cluster, local or existing.

A local cluster's workers grade on this machine: their grading processes are forked warm
(:mod:`.forkserver`) and their kernels from zygotes (:mod:`autograder.sandbox.zygote`),
started with the cluster and stopped with it. A cluster's workers elsewhere get neither.
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Iterator

import dask
from distributed import Client, LocalCluster

from ..sandbox import zygote
from ..sandbox.bubblewrap import Limits
from . import forkserver


@contextlib.contextmanager
def grading_cluster(jobs: int, scheduler: str | None, size: int) -> Iterator[tuple[Client, int]]:
    """A Dask client to grade a batch of ``size`` submissions with, and the compute
    threads each notebook's kernel gets: on the cluster at ``scheduler``, or locally on
    ``jobs`` workers (:func:`dask_client`).

    Locally, the fork server and the workers' zygotes start now, while the cluster does,
    and kernels share this machine's cores; a cluster's workers, whose machines this
    process does not know, give each kernel one thread.
    """
    if scheduler is not None:
        with dask_client(jobs, scheduler) as client:
            yield client, 1
        return
    try:
        forkserver.start_server()
        zygote.prestart(min(jobs, size))
        with dask_client(jobs) as client:
            yield client, Limits.threads_for(jobs)
    finally:                   # the local workers' zygotes: their threads are gone
        zygote.stop_all()


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
    # The workers are threads of this process: their heartbeats and the scheduler share its
    # event loop, so a stall of this process longer than the scheduler's worker TTL (five
    # minutes by default; the GIL held that long, a machine starved by a fork storm) made
    # the scheduler, once it woke, remove every worker as silent, and the submissions not
    # yet graded waited for ever. A worker of this process cannot be silent without it.
    with dask.config.set({"distributed.scheduler.worker-saturation": 1.0,
                          "distributed.scheduler.worker-ttl": None}), \
            LocalCluster(n_workers=max(1, jobs), threads_per_worker=1, processes=False,
                         dashboard_address=":0", silence_logs=logging.ERROR) as cluster, \
            Client(cluster) as client:
        yield client
