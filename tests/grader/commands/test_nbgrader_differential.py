"""Differential test: an ordinary nbgrader assignment graded by plain nbgrader and by us.

The assignment and its submissions are in ``tests/data/nbgrader-assignment/`` (made by its
``make_assignment.py``): ``ps1``, two ``.ipynb`` notebooks and an image, with autograder
tests (hidden tests, partial credit), answers graded by hand (markdown and code), a task
with a mark scheme and locked cells; an honest, a partial, an empty and a wrong submission,
and the wrong one with each cheating trick that nbgrader's own test suite knows.

In one scratch course, plain nbgrader (this environment's ``nbgrader`` command, a plain
``nbgrader_config.py``: ``generate_assignment`` then ``autograde``); in another, this grader
(``python -m autograder release``, ``grade``, ``export --json``); the two run at the same
time. Then, notebook by notebook, score, max_score and needs_manual_grade are read from each
gradebook (``nbgrader.api.Gradebook``):

* fair submissions (honest, partial, empty, wrong) get exactly what nbgrader gives;
* a cheating trick gets what nbgrader gives it or less, never more. Where nbgrader gives
  no automatic verdict — its run fails on the submission, or it leaves a deleted test cell
  to a human — the trick is held to what nbgrader gives the same answers without it (its
  fair submission), or with nbgrader's own option that grades deleted test cells
  (``OverwriteCells.add_missing_cells``).
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import nbformat
import pytest
from nbgrader.api import Gradebook, MissingEntry

from autograder.course import Course
from tests.conftest import REPO, run_cli

pytestmark = pytest.mark.xdist_group("nbgrader-differential")

DATA = REPO / "tests" / "data" / "nbgrader-assignment"


def _generator():
    """tests/data/nbgrader-assignment/make_assignment.py, which made the data."""
    spec = importlib.util.spec_from_file_location("make_assignment", DATA / "make_assignment.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


make = _generator()
ASSIGNMENT = make.ASSIGNMENT
NOTEBOOKS = make.NOTEBOOKS
STUDENTS = list(make.STUDENTS)
FAIR = [s for s, (_, baseline) in make.STUDENTS.items() if baseline is None]
TRICKS = [s for s in STUDENTS if s not in FAIR]

# A submission with a grade id twice stops plain nbgrader's whole batch (DeduplicateIds
# empties the first cell's metadata; nbgrader then takes the notebook for an old format and
# raises NbGraderException): nbgrader grades it alone, after the others.
STOPS_NBGRADER_BATCH = ["duplicate-tests"]
# Tricks that nbgrader's default leaves to a human, and the option of nbgrader's under which
# it grades them automatically.
NBGRADER_OPTION = {"delete-tests": "--OverwriteCells.add_missing_cells=True"}
NBGRADER_ERROR = re.compile(r"There was an error processing assignment '[^']*' for student "
                            r"'([^']+)'")


@dataclass(frozen=True)
class Grade:
    """A submitted notebook's grade as a gradebook holds it."""

    score: float
    max_score: float
    needs_manual_grade: bool

    def __str__(self) -> str:
        return f"{self.score:g}/{self.max_score:g}{' +hand' if self.needs_manual_grade else ''}"


def read_gradebook(db_url: str, students: list[str]) -> dict[tuple[str, str], Grade | None]:
    """(student, notebook) -> its grade, or None if the gradebook has no such notebook."""
    grades = {}
    with Gradebook(db_url) as gradebook:
        for student in students:
            for notebook in NOTEBOOKS:
                try:
                    found = gradebook.find_submission_notebook(notebook, ASSIGNMENT, student)
                except MissingEntry:
                    grades[student, notebook] = None
                else:
                    grades[student, notebook] = Grade(float(found.score),
                                                      float(found.max_score),
                                                      bool(found.needs_manual_grade))
    return grades


def _start(course: Path, *args: str) -> tuple[object, Path]:
    """Start plain nbgrader's command ``args`` in ``course``, logging to a file of its own."""
    log = course.parent / f"nbgrader-{len(list(course.parent.glob('nbgrader-*.log')))}.log"
    return make.plain_nbgrader(course, *args, log=log), log


def _finish(started: tuple[object, Path]) -> tuple[int, str]:
    """Wait for an nbgrader command: its exit status and what it logged."""
    process, log = started
    try:
        process.wait(timeout=900)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process.returncode, log.read_text()


@dataclass
class Plain:
    """Plain nbgrader's side: its course, what it gave, on which submissions it failed."""

    root: Path
    grades: dict
    failed: set
    with_option: dict        # student -> its grades under NBGRADER_OPTION[student]
    seconds: float


@dataclass
class Ours:
    """Our side: the course, each command's completed process, the gradebook's grades and
    the exported JSON."""

    root: Path
    released: object
    graded: object
    exported: object
    grades: dict
    exported_json: dict
    seconds: float


@pytest.fixture(scope="module")
def plain_started(tmp_path_factory):
    """Plain nbgrader's course, released, with its batch started (it runs while we grade;
    ended at the module's end if something stopped the tests before they waited for it)."""
    start = time.monotonic()
    root = make.plain_course(tmp_path_factory.mktemp("plain") / "course",
                             DATA / "source" / ASSIGNMENT)
    code, stderr = _finish(_start(root, "generate_assignment", ASSIGNMENT))
    assert code == 0, stderr[-3000:]
    shutil.copytree(DATA / "submissions", root / "submitted",
                    ignore=lambda folder, names: [n for n in names
                                                  if n in STOPS_NBGRADER_BATCH])
    batch = _start(root, "autograde", ASSIGNMENT)
    yield root, batch, start
    if batch[0].poll() is None:
        batch[0].kill()
        batch[0].wait()


@pytest.fixture(scope="module")
def ours(tmp_path_factory, plain_started) -> Ours:
    """Our side: release, grade and export, through the command line (nothing asserted
    here, so that plain nbgrader's side is read whatever happens)."""
    start = time.monotonic()
    course = Course.at(tmp_path_factory.mktemp("ours") / "course")
    shutil.copytree(DATA / "source" / ASSIGNMENT, course.source / ASSIGNMENT)
    released = run_cli(course, "release", ASSIGNMENT)
    shutil.copytree(DATA / "submissions", course.submitted)
    graded = exported = None
    grades, exported_json = {}, {}
    if released.returncode == 0:
        graded = run_cli(course, "grade", ASSIGNMENT, "--jobs", "2")
        exported = run_cli(course, "export", "--json", str(course.root / "grades.json"))
        if course.gradebook_path.exists():
            grades = read_gradebook(course.db_url, STUDENTS)
        if exported.returncode == 0:
            exported_json = json.loads((course.root / "grades.json").read_text())
    return Ours(course.root, released, graded, exported, grades, exported_json,
                time.monotonic() - start)


@pytest.fixture(scope="module")
def plain(plain_started, ours, tmp_path_factory) -> Plain:
    """Plain nbgrader's side, finished: the batch, then each submission that stops a batch
    graded alone, and each trick of NBGRADER_OPTION graded again with that option."""
    root, batch, start = plain_started
    _, stderr = _finish(batch)
    failed = set(NBGRADER_ERROR.findall(stderr))
    # Copies of the course graded so far for the option's runs, made before anything else
    # writes its gradebook; then those runs and the lone ones, all at the same time.
    clones = {}
    for student in NBGRADER_OPTION:
        clones[student] = tmp_path_factory.mktemp("plain-option") / "course"
        shutil.copytree(root, clones[student])
    for student in STOPS_NBGRADER_BATCH:
        shutil.copytree(DATA / "submissions" / student, root / "submitted" / student)
    alone = {student: _start(root, "autograde", ASSIGNMENT, "--student", student)
             for student in STOPS_NBGRADER_BATCH}
    optional = {student: _start(clones[student], "autograde", ASSIGNMENT, "--student", student,
                                "--force", option)
                for student, option in NBGRADER_OPTION.items()}
    for student, process in alone.items():
        code, stderr = _finish(process)
        if code != 0 or NBGRADER_ERROR.search(stderr):
            failed.add(student)
    with_option = {}
    for student, process in optional.items():
        code, stderr = _finish(process)
        assert code == 0, stderr[-3000:]
        with_option[student] = read_gradebook(f"sqlite:///{clones[student] / 'gradebook.db'}",
                                              [student])
    grades = read_gradebook(f"sqlite:///{root / 'gradebook.db'}", STUDENTS)
    return Plain(root, grades, failed, with_option, time.monotonic() - start)


def reference(plain: Plain, student: str, notebook: str) -> tuple[Grade | None, str]:
    """What a trick is held to, and why: nbgrader's grade of it, or where nbgrader gives no
    automatic verdict, its grade with its own option or of the same answers without it."""
    if student in plain.failed:
        baseline = make.STUDENTS[student][1]
        return plain.grades[baseline, notebook], f"nbgrader failed; as {baseline}"
    if student in plain.with_option:
        return (plain.with_option[student][student, notebook],
                f"nbgrader {NBGRADER_OPTION[student].lstrip('-')}")
    return plain.grades[student, notebook], "nbgrader"


def table(plain: Plain, ours: Ours) -> str:
    """The comparison, one line per submission and notebook."""
    lines = [f"{'student':22} {'notebook':9} {'nbgrader':>12} {'held to':>12} {'ours':>12}  "
             "reference"]
    for student in STUDENTS:
        for notebook in NOTEBOOKS:
            nbgrader = plain.grades.get((student, notebook))
            held, why = (reference(plain, student, notebook) if student in TRICKS
                         else (nbgrader, "nbgrader"))
            if student in plain.failed:
                nbgrader = "failed"
            lines.append(f"{student:22} {notebook:9} {str(nbgrader):>12} {str(held):>12} "
                         f"{str(ours.grades.get((student, notebook))):>12}  {why}")
    return "\n".join(lines)


def _ran(ours: Ours) -> None:
    """Our side's commands succeeded (else the test says which and why)."""
    assert ours.released.returncode == 0, ours.released.stdout + ours.released.stderr
    assert ours.graded.returncode == 0, ours.graded.stdout[-3000:] + ours.graded.stderr[-3000:]


# --- release ----------------------------------------------------------------------------------

def test_release_takes_the_assignment_and_gives_what_nbgrader_gives(ours, plain):
    """`release` refuses nothing legitimate: two notebooks and an image are released as
    nbgrader releases them (same cells, metadata and checksums)."""
    assert ours.released.returncode == 0, ours.released.stdout + ours.released.stderr
    mine, theirs = ours.root / "exercises" / ASSIGNMENT, plain.root / "release" / ASSIGNMENT
    assert sorted(p.name for p in mine.iterdir()) == sorted(p.name for p in theirs.iterdir()) \
        == sorted([f"{n}.ipynb" for n in NOTEBOOKS] + [make.IMAGE])
    for name in NOTEBOOKS:
        assert json.loads((mine / f"{name}.ipynb").read_text()) == \
            json.loads((theirs / f"{name}.ipynb").read_text()), name
    assert (mine / make.IMAGE).read_bytes() == (theirs / make.IMAGE).read_bytes()


SECRET_REGIONS = [("BEGIN SOLUTION", "END SOLUTION"), ("BEGIN HIDDEN TESTS", "END HIDDEN TESTS"),
                  ("BEGIN MARK SCHEME", "END MARK SCHEME")]


def secret_lines(notebook: nbformat.NotebookNode) -> set[str]:
    """Lines of the instructor's notebook that students must not see: inside solution,
    hidden-test and mark-scheme regions, and the model answers of written answers."""
    secrets = set()
    for cell in notebook.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("solution") and cell.cell_type == "markdown":
            secrets |= {line.strip() for line in cell.source.splitlines()}
            continue
        inside = False
        for line in cell.source.splitlines():
            if any(begin in line for begin, _ in SECRET_REGIONS):
                inside = True
            elif any(end in line for _, end in SECRET_REGIONS):
                inside = False
            elif inside:
                secrets.add(line.strip())
    return {line for line in secrets if len(line) >= 8}


def test_release_has_no_solution_no_hidden_test_no_mark_scheme(ours):
    """Checked here on our release independently of the leak check `release` runs."""
    assert ours.released.returncode == 0, ours.released.stdout + ours.released.stderr
    sources = [nbformat.read(DATA / "source" / ASSIGNMENT / f"{n}.ipynb", as_version=4)
               for n in NOTEBOOKS]
    secrets = set().union(*map(secret_lines, sources))
    assert len(secrets) >= 15                 # solutions, hidden tests, model answers, scheme
    for name in NOTEBOOKS:
        text = (ours.root / "exercises" / ASSIGNMENT / f"{name}.ipynb").read_text()
        for begin, end in SECRET_REGIONS:
            assert begin not in text and end not in text, (name, begin)
        shown = {line.strip() for cell in nbformat.reads(text, as_version=4).cells
                 for line in cell.source.splitlines()}
        assert not secrets & shown, (name, sorted(secrets & shown))
        assert "YOUR ANSWER HERE" in text                     # the written answers' stub


def test_committed_data_is_what_make_assignment_makes(plain):
    """source/ and submissions/ are generated, never edited: the generator, given the
    release nbgrader made in this run, makes them again (run make_assignment.py if not)."""
    for name, notebook in make.sources().items():
        committed = json.loads((DATA / "source" / ASSIGNMENT / f"{name}.ipynb").read_text())
        assert json.loads(nbformat.writes(notebook)) == committed, name
    assert (DATA / "source" / ASSIGNMENT / make.IMAGE).read_bytes() == make.image()
    release = {name: nbformat.read(plain.root / "release" / ASSIGNMENT / f"{name}.ipynb",
                                   as_version=4) for name in NOTEBOOKS}
    made = make.submissions(release)
    assert sorted(made) == sorted(p.name for p in (DATA / "submissions").iterdir())
    for student, notebooks in made.items():
        for name, notebook in notebooks.items():
            committed = DATA / "submissions" / student / ASSIGNMENT / f"{name}.ipynb"
            assert json.loads(nbformat.writes(notebook)) == json.loads(committed.read_text()), \
                f"{student}/{name}: run tests/data/nbgrader-assignment/make_assignment.py"


# --- grading ----------------------------------------------------------------------------------

def test_the_assignment_exercises_what_it_should(plain):
    """Plain nbgrader's own grades show what the data exercises: all autograded points for
    the honest work with its hand grades pending, partial credit, hidden tests that catch
    hard-coded answers, nothing for the release."""
    g = plain.grades
    assert g["honest", "problem1"] == Grade(4, 11, True)      # 4 autograded, 4 + task 3 by hand
    assert g["honest", "problem2"] == Grade(2, 3, True)
    assert g["partial", "problem1"] == Grade(3.5, 11, True)   # 1.5 of 2 by partial credit
    assert g["partial", "problem2"] == Grade(0, 3, False)     # untouched: answers score 0
    assert g["empty", "problem1"] == Grade(0, 11, True)       # the task always awaits a human
    assert g["empty", "problem2"] == Grade(0, 3, False)
    assert g["hardcoded", "problem2"].score == 1              # visible test passed, hidden not
    with Gradebook(f"sqlite:///{plain.root / 'gradebook.db'}") as gradebook:
        assert gradebook.find_grade("softmax_properties", "problem1", ASSIGNMENT,
                                    "partial").auto_score == 1.5
        # nbgrader's default leaves a deleted test cell to a human: no automatic verdict.
        for student in NBGRADER_OPTION:
            deleted = gradebook.find_grade("softmax_sums_to_one", "problem1", ASSIGNMENT,
                                           student)
            assert deleted.auto_score is None and deleted.needs_manual_grade


def test_fair_submissions_get_nbgraders_grades(plain, ours):
    """Honest, partial, empty and wrong work: the same score, max_score and
    needs_manual_grade as plain nbgrader, notebook by notebook."""
    _ran(ours)
    assert not plain.failed & set(FAIR), plain.failed
    differ = [(s, n) for s in FAIR for n in NOTEBOOKS
              if ours.grades[s, n] != plain.grades[s, n] or plain.grades[s, n] is None]
    assert not differ, f"differ: {differ}\n{table(plain, ours)}"


def test_cheating_tricks_get_no_more_than_nbgrader_gives(plain, ours):
    """Every trick: the same max_score, a score no higher than nbgrader's (or, where
    nbgrader gives no automatic verdict, than its reference), and no pending hand grade
    dropped."""
    _ran(ours)
    print(f"\nplain nbgrader {plain.seconds:.0f} s, ours {ours.seconds:.0f} s (concurrently)\n"
          + table(plain, ours))
    wrong = []
    for student in TRICKS:
        for notebook in NOTEBOOKS:
            held, why = reference(plain, student, notebook)
            mine = ours.grades[student, notebook]
            if held is None or mine is None or mine.max_score != held.max_score \
                    or mine.score > held.score \
                    or (held.needs_manual_grade and not mine.needs_manual_grade):
                wrong.append(f"{student}/{notebook}: ours {mine}, {why} {held}")
    assert not wrong, "\n".join(wrong) + "\n\n" + table(plain, ours)


def test_export_json_agrees_with_the_gradebook(ours):
    """`export --json`: each student's total is the sum of the gradebook's notebooks, and the
    cells awaiting a hand grade are marked so."""
    _ran(ours)
    assert ours.exported.returncode == 0, ours.exported.stderr
    exported = ours.exported_json["students"]
    assert sorted(exported) == sorted(STUDENTS)
    for student in STUDENTS:
        mine = exported[student][ASSIGNMENT]
        assert mine["score"] == pytest.approx(sum(ours.grades[student, n].score
                                                  for n in NOTEBOOKS)), student
        assert mine["max_score"] == 14
    pending = {cell for cell, grade in exported["honest"][ASSIGNMENT]["cells"].items()
               if grade.get("needs_manual_grade")}
    assert pending == {"why_subtract_max", "attend", "temperature_task",
                       "why_not_differentiable"}
    pending = {cell for cell, grade in exported["empty"][ASSIGNMENT]["cells"].items()
               if grade.get("needs_manual_grade")}
    assert pending == {"temperature_task"}    # unanswered answers score 0 without a human
