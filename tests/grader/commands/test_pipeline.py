"""The instructor's whole pipeline, through the real command line, on a mixed batch.

release -> collect (LMS zip) -> grade -> feedback -> export, with submissions that are
correct, untouched, unreadable, missing, broken on import, noisy on stderr and wrong.
"""

from __future__ import annotations

import csv
import json
import re
import zipfile

import nbformat
import pytest

from autograder.commands.release import assignment_secrets
from autograder.proving.catalogue import implementations
from tests.conftest import ASSIGNMENT, filled, notebooks, run_cli, submit, visible_text

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("pipeline")

FULL = 14.0          # the points the tests give
WRITTEN = 4.0        # and the two written answers, graded by hand
WARNS_ON_STDERR = '''
import sys
import warnings

import torch


def dot_score(query, keys):
    """Correct, but chatty: a warning and a line on stderr at every call."""
    warnings.warn("this implementation is slow", UserWarning, stacklevel=2)
    print("computing dot scores", file=sys.stderr)
    return torch.einsum("bd,bnd->bn", query, keys)
'''
BROKEN_IMPORT = '''
import not_a_real_module  # noqa: F401


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """One batch graded once; the tests below read what it produced."""
    from tests.conftest import make_course

    course = make_course(tmp_path_factory.mktemp("pipeline") / "course")
    release_nb, _ = notebooks(course)
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant")
                  if i.name == "scaled_by_sqrt_n")

    # Two students arrive through an LMS download (Canvas-style flat file names).
    lms = tmp_path_factory.mktemp("lms")
    archive = lms / "submissions.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr(f"alicesmith_12345_67890_{ASSIGNMENT}.ipynb",
                    nbformat.writes(filled(course)))
        zf.writestr(f"bobjones_LATE_23456_78901_{ASSIGNMENT}.ipynb", nbformat.writes(release_nb))
    collected = run_cli(course, "collect", str(archive), "--assignment", ASSIGNMENT)
    assert collected.returncode == 0, collected.stderr

    # The others are placed directly in submitted/.
    submit(course, "carol", '{"cells": [ this is not json')
    submit(course, "dave", None)                       # a folder without the notebook
    (course.submitted / "dave" / ASSIGNMENT / "notes.txt").write_text("forgot the notebook")
    submit(course, "erin", filled(course, BROKEN_IMPORT))
    submit(course, "frank", filled(course, WARNS_ON_STDERR))
    submit(course, "grace", filled(course, mutant.code))

    result = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2", "--timeout", "120")
    assert result.returncode == 0, result.stderr
    feedback = run_cli(course, "feedback", ASSIGNMENT)
    assert feedback.returncode == 0, feedback.stderr
    exported = run_cli(course, "export", "--csv", str(course.root / "grades.csv"),
                       "--json", str(course.root / "grades.json"))
    assert exported.returncode == 0, exported.stderr
    scores = json.loads((course.root / "grades.json").read_text())["students"]
    return course, scores, result.stdout


def test_collect_takes_student_ids_from_lms_file_names(graded):
    course, scores, _ = graded
    assert (course.submitted / "alicesmith" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()
    assert (course.submitted / "bobjones" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb").exists()


def test_every_submission_gets_the_marks_it_earned(graded):
    _, scores, _ = graded
    earned = {student: result[ASSIGNMENT]["score"] for student, result in scores.items()}
    assert earned["alicesmith"] == FULL           # correct
    assert earned["bobjones"] == 0                # the untouched release
    assert earned["carol"] == 0                   # not JSON
    assert earned["dave"] == 0                    # notebook missing
    assert 0 < earned["erin"] < FULL              # dot_score's cell raised on import
    assert earned["frank"] == FULL                # warnings on stderr cost nothing
    assert 0 < earned["grace"] < FULL             # one mistake costs its parts only
    for result in scores.values():
        assert result[ASSIGNMENT]["max_score"] == FULL + WRITTEN


def test_ungradable_submissions_say_why(graded):
    course, _, stdout = graded
    feedback = {s: (course.feedback / s / ASSIGNMENT / "index.html").read_text()
                for s in ("carol", "dave", "erin")}
    assert "not a valid notebook" in feedback["carol"]
    assert "missing from the submission" in feedback["dave"]
    assert "ModuleNotFoundError" in feedback["erin"] and "not_a_real_module" in feedback["erin"]
    assert "not a valid notebook" in stdout


def test_export_json_follows_the_contract(graded):
    course, scores, _ = graded
    _, source_nb = notebooks(course)
    grade_ids = {c.metadata["nbgrader"]["grade_id"]: c.metadata["nbgrader"]["points"]
                 for c in source_nb.cells if c.metadata.get("nbgrader", {}).get("grade")}
    assert set(scores) == {"alicesmith", "bobjones", "carol", "dave", "erin", "frank", "grace"}
    for result in scores.values():
        entry = result[ASSIGNMENT]
        assert set(entry) == {"score", "max_score", "cells"}
        assert set(entry["cells"]) == set(grade_ids)
        for grade_id, cell in entry["cells"].items():
            assert set(cell) - {"needs_manual_grade"} == {"score", "max_score"}
            assert cell["max_score"] == grade_ids[grade_id]
            assert isinstance(cell["score"], float) and 0 <= cell["score"] <= cell["max_score"]
        assert entry["score"] == sum(c["score"] for c in entry["cells"].values())


def test_export_csv_matches_json(graded):
    course, scores, _ = graded
    with (course.root / "grades.csv").open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == len(scores)
    for row in rows:
        entry = scores[row["student_id"]][row["assignment"]]
        assert float(row["score"]) == entry["score"]
        assert float(row["max_score"]) == entry["max_score"]
        for grade_id, cell in entry["cells"].items():
            assert float(row[f"{ASSIGNMENT}:{grade_id}"]) == cell["score"]


def test_feedback_shows_results_but_no_hidden_test(graded):
    course, _, _ = graded
    secrets = assignment_secrets(course, ASSIGNMENT)
    hidden_only = {line for line in secrets if "ref_" in line or "report(" in line}
    assert hidden_only, "the hidden tests should have recognisable lines"
    pages = sorted(course.feedback.rglob("*.html"))
    assert len([p for p in pages if p.name == "index.html"]) == 7
    for page in pages:
        text = visible_text(page.read_text())
        assert "BEGIN HIDDEN TESTS" not in text and "BEGIN SOLUTION" not in text, page
        leaked = [line for line in hidden_only if line in text]
        assert not leaked, f"{page} shows hidden test code: {leaked[:2]}"
    grace = (course.feedback / "grace" / ASSIGNMENT / "index.html").read_text()
    # This mutant passes the visible tests; the hidden test's verdict and message are shown.
    assert re.search(r"test-scaled-dot-score</code>.*?failed", grace, re.S)
    assert "scaled_dot_score, B=" in grace
