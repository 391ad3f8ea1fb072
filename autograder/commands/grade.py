"""`grade`: grade every submission on a Dask cluster and record the grades, one writer.

Each submission is graded by nbgrader in a process of its own
(:mod:`autograder.submission.child`, forked warm by :mod:`autograder.batch.forkserver` and
supervised by :mod:`autograder.batch.supervise`), started on a Dask worker: by default a
local cluster of ``--jobs`` workers on this machine, or any existing cluster
(``--scheduler ADDRESS``: Kubernetes, Slurm through dask-jobqueue, …) whose workers see the
course directory at the same path. Grading processes never touch the gradebook or
``autograded/``: each grades in a workspace inside the batch's folder and returns an
:class:`~autograder.course.Outcome`. This process is the only writer
(:mod:`autograder.batch.recorder`): it records each outcome as it arrives.

So grading can be stopped at any moment and started again: a submission whose recorded
outcome names the same submitted files and the same tests is not graded again (``force``
grades everything), and nothing is recorded twice — the gradebook holds one grade per cell,
which recording overwrites. A submission that cannot be graded — unreadable, missing,
crashing or too slow — still gets its row, with the marks it earned, zero for the rest
and the reasons; it never stops the batch.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from distributed import as_completed
from nbgrader.api import Gradebook, MissingEntry
from tqdm import tqdm

from ..batch import forkserver
from ..batch.cluster import grading_cluster
from ..batch.recorder import record, snapshot_gradebook
from ..batch.submissions import find_submissions, is_recorded, longest_first
from ..batch.supervise import grade_submission, workspace_name
from ..course import Course, Outcome
from ..course.defaults import DEFAULT_TIMEOUT
from ..course.outcome import load_outcome
from ..course.runtime import claim, clear_abandoned
from .release import release

BATCH_PREFIX = ".grading-"


def ensure_released(course: Course, assignments: list[str]) -> None:
    """Make sure the gradebook knows each assignment (a fresh clone has no gradebook)."""
    missing = []
    with Gradebook(course.db_url) as gb:
        for assignment in assignments:
            try:
                gb.find_assignment(assignment)
            except MissingEntry:
                missing.append(assignment)
    if missing:
        release(course, missing)


def grade(course: Course, assignments: list[str] | None = None, jobs: int = 1,
          timeout: int = DEFAULT_TIMEOUT, progress: bool = True, force: bool = False,
          scheduler: str | None = None) -> list[Outcome]:
    """Grade the submissions of ``assignments`` (default: all) not yet recorded as they are
    (every one with ``force``), and record the grades. Returns this run's outcomes."""
    submissions = find_submissions(course, assignments)
    ensure_released(course, sorted({s.assignment for s in submissions}))
    batch = [(s, load_outcome(course, s.student, s.assignment)) for s in submissions]
    todo = longest_first([(s, outcome) for s, outcome in batch
                          if force or not is_recorded(s, outcome)])
    if not todo:
        return []
    clear_abandoned(course.root.glob(f"{BATCH_PREFIX}*"))
    outcomes = []
    # The batch's scratch folder is in the course, so everything grading starts names the
    # course (see autograder.sandbox.reaping), and a batch never mistakes another course's
    # processes.
    with tempfile.TemporaryDirectory(prefix=BATCH_PREFIX, dir=course.root) as scratch_dir:
        scratch = Path(scratch_dir)
        claim(scratch)
        snapshot = snapshot_gradebook(course, scratch / "gradebook-snapshot.db")
        forkserver.prepare(course.root, sorted({s.assignment for s in todo}), snapshot)
        with grading_cluster(jobs, scheduler, len(todo)) as (client, threads), \
                Gradebook(course.db_url) as gradebook:
            futures = {client.submit(grade_submission, course, s.student, s.assignment,
                                     snapshot, timeout, scratch, threads, pure=False,
                                     key=f"grade-{i}"): s
                       for i, s in enumerate(todo)}
            for future in tqdm(as_completed(futures), total=len(futures), desc="grading",
                               unit="submission", disable=not progress):
                submission = futures[future]
                outcome, graded = future.result()
                outcome.fingerprint = submission.fingerprint
                record(course, outcome, graded, gradebook)
                shutil.rmtree(scratch / workspace_name(submission.student,
                                                       submission.assignment),
                              ignore_errors=True)
                outcomes.append(outcome)
    return sorted(outcomes, key=lambda o: (o.assignment, o.student))
