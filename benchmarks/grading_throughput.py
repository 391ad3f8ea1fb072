"""Grading throughput: plain ``nbgrader autograde`` against ``python -m autograder grade``.

Builds one batch of synthetic submissions of ``attention-scoring`` — correct ones, wrong
ones (catalogued mutants) and slow ones (correct, but every score function sleeps) — and
grades identical copies of it, in the same run, with

* plain nbgrader: ``nbgrader autograde`` on the course (its own runner: one notebook after
  the other, in one process, no sandbox; the course's nbgrader settings, so the same
  hidden tests run), and
* this course's grader: ``python -m autograder grade --jobs N`` (a local Dask cluster,
  every notebook in its sandbox), three ways: cold (``AUTOGRADER_COLD_START=1``: every
  grading process a fresh interpreter, every kernel a fresh sandbox that imports torch);
  warm graders with cold kernels (``AUTOGRADER_COLD_KERNELS=1``: grading processes forked
  from a server that imported the grader, :mod:`autograder.batch.forkserver`); and warm, the
  default (kernels forked, too, from a sandboxed zygote that imported torch,
  :mod:`autograder.sandbox.zygote`); and, when the benchmark runs as root, warm again as
  an unprivileged grader (a local user made for the run, :mod:`tests.unprivileged`): its
  zygote forks each kernel into a user namespace of its own where a root grader's gives
  each a user of its own.

It prints the throughputs and their ratios to plain nbgrader, and the grader's cost per
notebook (seconds from taking the submission to having its outcome, on one worker)
against the tests' own compute time: the seconds the notebook's cells take to run in a
fresh kernel (plain nbgrader's run of the same notebook, including its ``import torch``).

    python benchmarks/grading_throughput.py [--submissions 24] [--jobs 2]
"""

from __future__ import annotations

import argparse
import os
import pwd
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

import nbformat

from autograder.commands.release import release
from autograder.course import Course
from autograder.course.outcome import load_outcome
from autograder.proving.catalogue import implementations
from autograder.proving.fill import fill_release

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from tests.unprivileged import as_instructor, instructor  # noqa: E402

ASSIGNMENT = "attention-scoring"
SLOW = '''
import time


def dot_score(query, keys):
    time.sleep(0.3)
    return (keys * query.unsqueeze(1)).sum(-1)
'''


def build_batch(root: Path, count: int) -> Course:
    """A released course with ``count`` submissions: half correct, a third wrong, the
    rest slow, in a class's order: the students' numbers say nothing of their kind (a
    fixed shuffle), as alphabetical names say nothing of how fast a notebook is."""
    course = Course.at(root)
    shutil.copytree(REPO / "solutions" / ASSIGNMENT, course.source / ASSIGNMENT,
                    ignore=shutil.ignore_patterns("*.ipynb"))
    shutil.copy(REPO / "nbgrader_config.py", root / "nbgrader_config.py")
    release(course, [ASSIGNMENT])
    released = nbformat.read(course.release / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    source = nbformat.read(course.source / ASSIGNMENT / f"{ASSIGNMENT}.ipynb", as_version=4)
    mutants = implementations(ASSIGNMENT, "mutant")
    numbers = list(range(count))
    random.Random(0).shuffle(numbers)
    for i, number in enumerate(numbers):
        kind = ("slow" if i % 6 == 5 else "wrong" if i % 3 == 1 else "correct")
        code = SLOW if kind == "slow" else mutants[i % len(mutants)].code if kind == "wrong" \
            else None
        folder = course.submitted / f"student-{number:03d}" / ASSIGNMENT
        folder.mkdir(parents=True)
        nbformat.write(fill_release(released, source, code), folder / f"{ASSIGNMENT}.ipynb")
    return course


def cell_seconds(notebook: Path) -> float:
    """Seconds the notebook's cells took to run, from nbclient's timestamps."""
    total = 0.0
    for cell in nbformat.read(notebook, as_version=4).cells:
        timing = cell.get("metadata", {}).get("execution", {})
        start, end = timing.get("iopub.execute_input"), timing.get("shell.execute_reply")
        if start and end:
            total += (datetime.fromisoformat(end.replace("Z", "+00:00"))
                      - datetime.fromisoformat(start.replace("Z", "+00:00"))).total_seconds()
    return total


def timed(command: list[str], cwd: Path, **env: str) -> float:
    started = time.perf_counter()
    result = subprocess.run(command, cwd=cwd, capture_output=True, text=True, check=False,
                            env={**os.environ, "PYTHONPATH": str(REPO), **env})
    if result.returncode != 0:
        sys.exit(f"{' '.join(command[:4])} failed:\n{result.stdout[-2000:]}\n"
                 f"{result.stderr[-2000:]}")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--submissions", type=int, default=24)
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    bindir = Path(sys.executable).parent
    with tempfile.TemporaryDirectory(prefix="bench-grading-") as scratch:
        print(f"{args.submissions} submissions of {ASSIGNMENT} (correct, wrong and slow); "
              f"{os.cpu_count()} cores", flush=True)
        plain = build_batch(Path(scratch) / "plain", args.submissions)
        plain_seconds = timed([str(bindir / "nbgrader"), "autograde", ASSIGNMENT,
                               "--force"], plain.root)
        report("plain nbgrader autograde", plain_seconds, args.submissions)
        own = {folder.name: cell_seconds(plain.autograded / folder.name / ASSIGNMENT
                                         / f"{ASSIGNMENT}.ipynb")
               for folder in sorted(plain.submitted.iterdir())}
        grade = [sys.executable, "-m", "autograder", "grade", ASSIGNMENT,
                 "--jobs", str(args.jobs)]
        for label, env in [("cold", {"AUTOGRADER_COLD_START": "1"}),
                           ("warm graders, cold kernels", {"AUTOGRADER_COLD_KERNELS": "1"}),
                           ("warm", {})]:
            course = build_batch(Path(scratch) / label.replace(" ", "-"), args.submissions)
            seconds = timed([*grade[:3], "--root", str(course.root), *grade[3:]], REPO, **env)
            report(f"autograder grade --jobs {args.jobs}, {label}", seconds, args.submissions,
                   plain_seconds)
            costs(course, own)
        if os.geteuid() == 0:
            unprivileged(args.submissions, args.jobs, plain_seconds, own)


def unprivileged(count: int, jobs: int, plain_seconds: float, own: dict[str, float]) -> None:
    """The warm grader again, run by a local user made for it (root's figure is above)."""
    with instructor() as name:
        place = Path(tempfile.mkdtemp(prefix="bench-unprivileged-"))
        try:
            course = build_batch(place / "course", count)
            subprocess.run(["chown", "-R", str(pwd.getpwnam(name).pw_uid), str(place)],
                           check=True)
            started = time.perf_counter()
            run = as_instructor(name, sys.executable, "-m", "autograder", "--root",
                                str(course.root), "grade", ASSIGNMENT, "--jobs", str(jobs),
                                timeout=3600)
            seconds = time.perf_counter() - started
            if run.returncode != 0 or "cannot confine kernels" in run.stderr:
                sys.exit(f"the unprivileged grader failed or started kernels cold:\n"
                         f"{run.stderr[-2000:]}")
            report(f"autograder grade --jobs {jobs}, warm, unprivileged grader", seconds,
                   count, plain_seconds)
            costs(course, own)
        finally:
            shutil.rmtree(place, ignore_errors=True)


def costs(course: Course, own: dict[str, float]) -> None:
    """Print each notebook's grading cost against the tests' own compute time."""
    ratios = [outcome.seconds / own[name] for name in own
              if (outcome := load_outcome(course, name, ASSIGNMENT)) and own[name] > 0]
    if ratios:
        print(f"    per notebook, cost / the tests' own compute time: median "
              f"{statistics.median(ratios):.2f}x (min {min(ratios):.2f}x, "
              f"max {max(ratios):.2f}x)", flush=True)


def report(label: str, seconds: float, count: int, baseline: float | None = None) -> None:
    ratio = f"  ratio to plain nbgrader {baseline / seconds:5.2f}x" if baseline else ""
    print(f"{label:48} {seconds:7.1f} s  {60 * count / seconds:6.1f} submissions/min{ratio}",
          flush=True)


if __name__ == "__main__":
    main()
