"""On the hub, ``counts = "best"``: a student's best official grading counts, however many
worse ones follow it (make test-full: six gradings through the real pipeline).

A student hands in a correct notebook, then one with a catalogued mistake, then a correct
one again, through the exchange; the grading service (``serve --once`` each time) grades
each as it arrives and tells the student which grading counts. After the worse one the
gradebook still holds the best (put back and graded again in the same round), and each
submission's feedback, which the student's Assignment List shows under that submission,
says which counts."""

from __future__ import annotations

import json
import os
import pwd
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash

from autograder.commands.attempts import attempts_of
from autograder.proving.catalogue import implementations
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli

pytestmark = [pytest.mark.full, pytest.mark.xdist_group("best-attempt")]


def _hand_in(exchange: Path, student: str, minute: int, notebook, secret: str) -> None:
    folder = exchange / "attention-nlp" / "inbound" / \
        f"{student}+{ASSIGNMENT}+2026-11-29 12:0{minute}:00.000000 UTC+{secret}"
    folder.mkdir(parents=True)
    nbformat.write(notebook, folder / f"{ASSIGNMENT}.ipynb")
    (folder / "timestamp.txt").write_text(f"2026-11-29 12:0{minute}:00.000000 UTC")
    (folder / "submission_secret.txt").write_text(secret)


def _serve(course, exchange: Path) -> str:
    result = run_cli(course, "--exchange", str(exchange), "serve", ASSIGNMENT, "--once",
                     "--jobs", "1")
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    return result.stdout


def _feedback(exchange: Path, secret: str) -> str:
    name = notebook_hash(secret=secret, notebook_id=ASSIGNMENT)
    return (exchange / "attention-nlp" / "feedback" / f"{name}.html").read_text()


def _in_the_gradebook(course, student: str) -> float:
    with Gradebook(course.db_url) as gb:
        return gb.find_submission(ASSIGNMENT, student).score


def test_the_best_official_grading_counts(tmp_path):
    course = make_course(tmp_path / "course")
    (course.root / "deadlines.toml").write_text(
        f'[assignments.{ASSIGNMENT}]\ncounts = "best"\n')
    exchange = tmp_path / "exchange"
    me = pwd.getpwuid(os.geteuid()).pw_name
    mistake = next(i for i in implementations(ASSIGNMENT, "mutant")
                   if i.name == "scaled_by_sqrt_n")

    _hand_in(exchange, me, 1, filled(course), "first")
    output = _serve(course, exchange)
    assert f"graded: {me} {ASSIGNMENT} 14 / 18" in output, output
    assert "this submission, with 14 of the 14 points of the tests" in _feedback(exchange, "first")

    _hand_in(exchange, me, 2, filled(course, mistake.code), "second")
    output = _serve(course, exchange)
    assert f"best attempt put back and graded again: {me} {ASSIGNMENT}" in output, output
    worse = attempts_of(course, me, ASSIGNMENT)[-1]
    assert worse.score < 14.0, worse
    assert _in_the_gradebook(course, me) == 14.0                  # the best, not the last
    told = _feedback(exchange, "second")
    assert "the submission that arrived at" in told and "with 14 of the 14 points" in told
    assert f"This one earned {worse.score:g}." in told
    assert "this submission, with 14 of the 14" in _feedback(exchange, "first")
    exported = run_cli(course, "export", "--json", str(tmp_path / "grades.json"))
    assert exported.returncode == 0, exported.stderr
    grades = json.loads((tmp_path / "grades.json").read_text())
    assert grades["students"][me][ASSIGNMENT]["score"] == 14.0, grades

    _hand_in(exchange, me, 3, filled(course), "third")
    output = _serve(course, exchange)
    assert "put back" not in output, output                        # equal: the latest counts
    assert "this submission, with 14 of the 14" in _feedback(exchange, "third")
    assert _in_the_gradebook(course, me) == 14.0
    assert [a.score for a in attempts_of(course, me, ASSIGNMENT)] == [14.0, worse.score, 14.0]
    assert _serve(course, exchange).count("graded:") == 0          # nothing graded twice
