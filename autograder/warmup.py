"""Imported by the grading fork server (:mod:`autograder.warm`) before it forks anything:
do once, there, the work every grading process would otherwise repeat.

Every grading process is a fresh fork of the server, so whatever the server computed is
there for free, and whatever it did not is paid for each submission: the hidden tests'
references (torch, with its seeding's stack bookkeeping), nbformat's compiled notebook
schema, and everything that a library computes the first time it is used and keeps —
SQLAlchemy's mappers, loaders and compiled queries of nbgrader's gradebook, nbgrader's
and nbconvert's configuration and templates. Those last are warmed by rehearsing the
batch: grading each assignment's released notebook once, but for running it
(:func:`autograder.worker.rehearse`), which halves a grading process's own CPU time.

``AUTOGRADER_WARM_BATCH`` names the file that describes the batch (see
:func:`autograder.warm.prepare`): the server may start before the grader knows the batch,
so it imports first, then waits for that file. Without it, or if it does not come or a
rehearsal fails, each grading process simply does that work itself.

torch is kept to one thread here: a process that forks must not have started a thread
pool, and the grader's references are small.
"""

from __future__ import annotations

import atexit
import json
import os
import time
from pathlib import Path

import IPython.paths  # noqa: F401 - what jupyter_client imports to find a kernel (all IPython)
import nbformat
import sqlalchemy.orm
import torch
from jupyter_client.provisioning import KernelProvisionerFactory
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader import api  # noqa: F401 - its models, for configure_mappers

from . import (
    hidden,
    kernel_client,  # noqa: F401 - named in the sandbox's settings, imported on first use
    worker,  # noqa: F401 - the grading code itself
)
from .course import Course
from .suite_files import SUITE_FILE
from .warm import BATCH_VARIABLE, BATCH_WAIT

torch.set_num_threads(1)
KernelProvisionerFactory.instance()     # reads every package's entry points
sqlalchemy.orm.configure_mappers()
nbformat.validate(new_notebook(cells=[new_code_cell("1"), new_markdown_cell("x")]))


def _described_batch(path: Path) -> dict | None:
    """The batch's description once the grader has written it; None if it does not come
    in time or the grader is gone."""
    grader, deadline = os.getppid(), time.monotonic() + BATCH_WAIT
    if not path.exists():
        path.with_suffix(".waiting").touch()        # says so, for whoever wants to know
    while not path.exists():
        if os.getppid() != grader or time.monotonic() > deadline:
            return None
        time.sleep(0.02)
    return json.loads(path.read_text())


REHEARSED: list[str] = []     # the assignments this server rehearsed (what its children know)


def _prepare_for_the_batch() -> None:
    described = os.environ.get(BATCH_VARIABLE)
    if not described:
        return
    # Only a fork server that warm.start_server started gets here. It ends when its grader
    # does, with nothing left to write: it skips tearing down torch and the rest (a second
    # and more of CPU, holding the grader's output open meanwhile).
    atexit.register(os._exit, 0)
    batch = _described_batch(Path(described))
    if batch is None:
        return
    course = Course.at(batch["root"])
    for assignment in batch["assignments"]:
        try:
            hidden.load(course.source / assignment / SUITE_FILE)
            worker.rehearse(course, assignment, Path(batch["gradebook"]))
            REHEARSED.append(assignment)
        except Exception:   # noqa: BLE001 - a broken suite fails where it is graded, with a reason
            pass


_prepare_for_the_batch()
