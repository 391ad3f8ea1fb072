"""Imported by the grading fork server (:mod:`.forkserver`) before it forks anything:
do once, there, the work every grading process would otherwise repeat.

Every grading process is a fresh fork of the server, so whatever the server computed is
there for free, and whatever it did not is paid for each submission: the hidden tests'
references (torch, with its seeding's stack bookkeeping), nbformat's compiled notebook
schema, and everything that a library computes the first time it is used and keeps —
SQLAlchemy's mappers, loaders and compiled queries of nbgrader's gradebook, nbgrader's
and nbconvert's configuration and templates. Those last are warmed by rehearsing the
batch: grading each assignment's released notebook once, but for running it
(:func:`autograder.submission.child.rehearse`), which halves a grading process's own CPU
time.

``AUTOGRADER_WARM_BATCH`` names the file that describes the batch (see
:func:`.forkserver.prepare`): the server may start before the grader knows the batch, so it
imports first, then waits for that file. Without it, or if it does not come or a rehearsal
fails, each grading process simply does that work itself. The server says what it did in
its log (:func:`.forkserver.server_log`).

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

from ..course import Course
from ..course.files import SUITE_FILE
from ..hidden.references import load
from ..submission.child import rehearse
from .forkserver import BATCH_VARIABLE, BATCH_WAIT, log_of

torch.set_num_threads(1)
KernelProvisionerFactory.instance()     # reads every package's entry points
sqlalchemy.orm.configure_mappers()
nbformat.validate(new_notebook(cells=[new_code_cell("1"), new_markdown_cell("x")]))


def _log(path: Path, line: str) -> None:
    with path.open("a") as log:
        log.write(f"{time.strftime('%H:%M:%S')} {line}\n")


def _described_batch(path: Path) -> dict | None:
    """The batch's description once the grader has written it; None if it does not come
    in time or the grader is gone."""
    grader, deadline = os.getppid(), time.monotonic() + BATCH_WAIT
    if not path.exists():
        _log(log_of(path), "imported everything; waiting for the batch")
    while not path.exists():
        if os.getppid() != grader or time.monotonic() > deadline:
            _log(log_of(path), "no batch came: grading processes prepare for themselves")
            return None
        time.sleep(0.02)
    return json.loads(path.read_text())


def _prepare_for_the_batch() -> None:
    described = os.environ.get(BATCH_VARIABLE)
    if not described:
        return
    # Only a fork server that forkserver.start_server started gets here. It ends when its
    # grader does, with nothing left to write: it skips tearing down torch and the rest (a
    # second and more of CPU, holding the grader's output open meanwhile).
    atexit.register(os._exit, 0)
    batch = _described_batch(Path(described))
    if batch is None:
        return
    course, log = Course.at(batch["root"]), log_of(Path(described))
    for assignment in batch["assignments"]:
        started = time.monotonic()
        try:
            load(course.source / assignment / SUITE_FILE)
            rehearse(course, assignment, Path(batch["gradebook"]))
        except Exception as error:  # noqa: BLE001 - a broken suite fails where it is graded
            _log(log, f"could not rehearse {assignment} ({type(error).__name__}: {error}); "
                      "its grading processes prepare for themselves")
        else:
            _log(log, f"rehearsed {assignment} in {time.monotonic() - started:.1f} s")


_prepare_for_the_batch()
