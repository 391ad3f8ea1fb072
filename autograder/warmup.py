"""Imported by the grading fork server (:mod:`autograder.warm`) before it forks anything:
do once, there, the work every grading process would otherwise repeat.

Every grading process is a fresh fork of the server, so whatever the server computed is
there for free, and whatever it did not is paid for each submission: the hidden tests'
references (torch, with its seeding's stack bookkeeping), nbformat's compiled notebook
schema and SQLAlchemy's configured mappers of nbgrader's gradebook. The suites to prepare
are named, ``os.pathsep``-separated, in ``AUTOGRADER_WARM_SUITES`` (see
:func:`autograder.warm.prepare`); a suite not named is simply computed when needed.

torch is kept to one thread here: a process that forks must not have started a thread
pool, and the grader's references are small.
"""

from __future__ import annotations

import os

import nbformat
import sqlalchemy.orm
import torch
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook
from nbgrader import api  # noqa: F401 - its models, for configure_mappers

from . import (
    hidden,
    worker,  # noqa: F401 - the grading code itself
)
from .warm import SUITES_VARIABLE

torch.set_num_threads(1)
sqlalchemy.orm.configure_mappers()
nbformat.validate(new_notebook(cells=[new_code_cell("1"), new_markdown_cell("x")]))
for _suite in filter(None, os.environ.get(SUITES_VARIABLE, "").split(os.pathsep)):
    try:
        hidden.load(_suite)
    except Exception:       # noqa: BLE001 - a broken suite fails where it is graded, with a reason
        pass
