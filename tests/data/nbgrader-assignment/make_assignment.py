"""An ordinary nbgrader assignment, and submissions to it, for the differential test.

``ps1`` is written the way nbgrader's documentation teaches (its ``source/ps1`` example:
two notebooks and an image), with every kind of cell nbgrader knows:

* ``problem1.ipynb`` — a locked header showing ``weights.png``; a locked helper cell; two
  autograded answers (``### BEGIN SOLUTION``); autograder tests, one with hidden tests
  (``### BEGIN HIDDEN TESTS``) and one giving partial credit (its last expression is the
  number of points); a written answer and a code answer graded by hand; a task graded by
  hand, with a mark scheme (``=== BEGIN MARK SCHEME ===``).
* ``problem2.ipynb`` — an autograded answer, two autograder tests (one with hidden tests)
  and a written answer graded by hand.

The submissions are made from nbgrader's own release of it (``nbgrader
generate_assignment`` with a plain configuration): the release as it is (``empty``), an
honest complete one, a partial one, a wrong one, and the wrong one with each cheating trick
that nbgrader's own test suite defends against (``nbgrader/tests/apps`` and
``nbgrader/tests/preprocessors``). See :data:`STUDENTS`.

Run ``python tests/data/nbgrader-assignment/make_assignment.py`` (from the repository's
environment) after changing this file: it writes ``source/ps1/`` and ``submissions/`` beside
it; ``--check`` says whether the committed files are what it writes.
"""

from __future__ import annotations

import argparse
import copy
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output

HERE = Path(__file__).resolve().parent
ASSIGNMENT = "ps1"
NOTEBOOKS = ("problem1", "problem2")
IMAGE = "weights.png"

# What plain nbgrader needs to release and grade it: nothing but the course's name.
PLAIN_CONFIG = 'c = get_config()  # noqa: F821\nc.CourseDirectory.course_id = "plain"\n'

KERNELSPEC = {"display_name": "Python 3 (ipykernel)", "language": "python", "name": "python3"}


# --- the instructor's notebooks -------------------------------------------------------------

def _meta(grade_id: str, *, grade=False, solution=False, locked=False, task=False,
          points=None) -> dict:
    """nbgrader's cell metadata, as its Create Assignment toolbar writes it (schema 3)."""
    meta = {"grade": grade, "grade_id": grade_id, "locked": locked, "schema_version": 3,
            "solution": solution}
    if task:
        meta["task"] = True
    if points is not None:
        meta["points"] = points
    return {"nbgrader": meta}


def _md(cell_id: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = new_markdown_cell(source.strip("\n"), id=cell_id)
    if nbgrader:
        cell.metadata = _meta(cell_id, **nbgrader)
    return cell


def _code(cell_id: str, source: str, **nbgrader) -> nbformat.NotebookNode:
    cell = new_code_cell(source.strip("\n"), id=cell_id)
    if nbgrader:
        cell.metadata = _meta(cell_id, **nbgrader)
    return cell


def _notebook(cells: list) -> nbformat.NotebookNode:
    return new_notebook(cells=cells, metadata={"kernelspec": KERNELSPEC,
                                               "language_info": {"name": "python"}})


def problem1() -> nbformat.NotebookNode:
    return _notebook([
        _md("header", f"""
# Problem 1: attention weights

Attention sums values, each weighted by how well its key matches the query:

![Three values and their attention weights, drawn as bars]({IMAGE})
""", locked=True),
        _code("helpers", '''
def close(a, b, tol=1e-9):
    """Whether two lists of numbers are equal, each within tol."""
    return len(a) == len(b) and all(abs(x - y) <= tol for x, y in zip(a, b, strict=True))
''', locked=True),
        _md("part-a", """
---
## Part A (3 points)

Write `softmax(scores)`: a list of weights proportional to $e^{s_i}$ that sum to 1. It
must work for large scores too ($e^{1000}$ overflows a float).
"""),
        _code("softmax", '''
import math


def softmax(scores):
    """Weights proportional to exp(score), summing to 1."""
    ### BEGIN SOLUTION
    top = max(scores)
    exps = [math.exp(s - top) for s in scores]
    total = sum(exps)
    return [e / total for e in exps]
    ### END SOLUTION
''', solution=True),
        _code("try-softmax", "softmax([1.0, 2.0, 3.0])"),
        _code("softmax_sums_to_one", '''
"""Check that softmax gives weights that sum to one."""
assert abs(sum(softmax([1.0, 2.0, 3.0])) - 1) < 1e-9
assert close(softmax([0.0, 0.0]), [0.5, 0.5])
''', grade=True, locked=True, points=1),
        _code("softmax_properties", '''
"""Half a point for each property softmax has: this cell's value is the score."""
checks = [
    lambda: close(softmax([0.0, 0.0, 0.0, 0.0]), [0.25] * 4),
    lambda: softmax([1.0, 3.0])[1] > softmax([1.0, 3.0])[0],
    lambda: close(softmax([1000.0, 1000.0]), [0.5, 0.5]),
    lambda: close(softmax([-1000.0, 0.0]), [0.0, 1.0]),
]
points = 0.0
for check in checks:
    try:
        points += 0.5 if check() else 0.0
    except Exception:
        pass
points
''', grade=True, locked=True, points=2),
        _md("part-b", """
---
## Part B (1 point)

Write `weighted_sum(values, weights)`, the sum of `values[i] * weights[i]`.
"""),
        _code("weighted_sum", '''
def weighted_sum(values, weights):
    """The sum of the values, each times its weight."""
    ### BEGIN SOLUTION
    return sum(v * w for v, w in zip(values, weights, strict=True))
    ### END SOLUTION
''', solution=True),
        _code("correct_weighted_sum", '''
"""Check weighted_sum on the example above (and on cases of the grader's own)."""
assert weighted_sum([1.0, 2.0], [0.5, 0.5]) == 1.5
### BEGIN HIDDEN TESTS
assert weighted_sum([], []) == 0
assert weighted_sum([3.0, 4.0], [2.0, 0.0]) == 6.0
### END HIDDEN TESTS
''', grade=True, locked=True, points=1),
        _md("part-c", """
---
## Part C (2 points)

Subtracting the largest score from every score before exponentiating changes nothing in
the weights. Explain why, and why it is done anyway.
"""),
        _md("why_subtract_max", """
Every exponential is multiplied by the same factor $e^{-m}$, which cancels between the
numerator and the sum in the denominator. It is done because $e^{s}$ overflows for scores
above about 709, while after the shift the largest exponential is $e^0 = 1$.
""", grade=True, solution=True, points=2),
        _md("part-d", """
---
## Part D (2 points, graded by hand)

Using `softmax` and `weighted_sum`, write `attend(query, keys, values)`: dot-product
attention of one query (a list of numbers) over keys (lists of numbers) and values (numbers).
Your code is read by a person: make it clear.
"""),
        _code("attend", '''
def attend(query, keys, values):
    """Dot-product attention of one query over keys, returning the weighted value."""
    ### BEGIN SOLUTION
    scores = [sum(q * k for q, k in zip(query, key, strict=True)) for key in keys]
    return weighted_sum(values, softmax(scores))
    ### END SOLUTION
''', grade=True, solution=True, points=2),
        _md("temperature_task", """
---
## Part E (3 points)

In cells of your own below, show how the weights of `softmax([1.0, 2.0, 3.0])` change
when every score is divided by a temperature of 0.1, 1 and 10, and say what you see.

=== BEGIN MARK SCHEME ===
One point for each temperature shown; the sentence must say that a low temperature
approaches hard attention and a high one approaches uniform weights.
=== END MARK SCHEME ===
""", task=True, locked=True, points=3),
    ])


def problem2() -> nbformat.NotebookNode:
    return _notebook([
        _md("intro", """
# Problem 2: hard attention

Hard attention puts all the weight on the best-matching key.
""", locked=True),
        _code("hard_attention", '''
def hard_attention(scores):
    """One-hot weights: 1 at the first highest score, 0 elsewhere."""
    ### BEGIN SOLUTION
    best = scores.index(max(scores))
    return [1.0 if i == best else 0.0 for i in range(len(scores))]
    ### END SOLUTION
''', solution=True),
        _code("hard_attention_one_hot", '''
"""Check that hard_attention is one-hot at the best score."""
assert hard_attention([0.1, 0.7, 0.2]) == [0.0, 1.0, 0.0]
''', grade=True, locked=True, points=1),
        _code("hard_attention_ties", '''
"""Check that ties go to the first best score."""
assert hard_attention([2.0, 2.0]) == [1.0, 0.0]
### BEGIN HIDDEN TESTS
assert hard_attention([5.0]) == [1.0]
assert hard_attention([3.0, 1.0, 3.0]) == [1.0, 0.0, 0.0]
### END HIDDEN TESTS
''', grade=True, locked=True, points=1),
        _md("part-b", """
---
## Part B (1 point)

Why can a model not learn hard attention's choice by gradient descent?
"""),
        _md("why_not_differentiable", """
The one-hot choice is a step function of the scores: its derivative is zero almost
everywhere, so no gradient reaches the scores.
""", grade=True, solution=True, points=1),
    ])


def sources() -> dict[str, nbformat.NotebookNode]:
    return {"problem1": problem1(), "problem2": problem2()}


def image() -> bytes:
    """weights.png: three bars of heights 0.09, 0.24 and 0.67 (softmax of 1, 2, 3)."""
    width, height = 120, 80
    bars = [(10, 30, 0.09), (45, 65, 0.24), (80, 110, 0.67)]
    rows = []
    for y in range(height):
        row = bytearray([0])                       # filter: none
        for x in range(width):
            inside = any(x0 <= x < x1 and y >= height - round(h * height / 0.7)
                         for x0, x1, h in bars)
            row += bytes((40, 90, 160) if inside else (255, 255, 255))
        rows.append(bytes(row))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    return (b"\x89PNG\r\n\x1a\n"
            + chunk(b"IHDR", struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0))
            + chunk(b"IDAT", zlib.compress(b"".join(rows), 9))
            + chunk(b"IEND", b""))


def write_source(folder: Path) -> None:
    """The instructor's source folder of ps1: two notebooks and the image."""
    folder.mkdir(parents=True, exist_ok=True)
    for name, notebook in sources().items():
        nbformat.write(notebook, folder / f"{name}.ipynb")
    (folder / IMAGE).write_bytes(image())


def plain_nbgrader(course: Path, *args: str, log: Path | None = None) -> subprocess.Popen:
    """Start the ``nbgrader`` command of this environment in the course directory ``course``
    (with this environment's ``alembic`` on PATH, which nbgrader runs for its gradebook).
    Its output goes to the file ``log`` if given, else to pipes."""
    bindir = Path(sys.executable).parent
    env = {**os.environ, "PATH": f"{bindir}{os.pathsep}{os.environ.get('PATH', '')}"}
    if log is None:
        out, err = subprocess.PIPE, subprocess.PIPE
    else:
        out, err = log.open("w"), subprocess.STDOUT
    try:
        return subprocess.Popen([str(bindir / "nbgrader"), *args], cwd=course, env=env,
                                stdout=out, stderr=err, text=True)
    finally:
        if log is not None:
            out.close()


def plain_course(root: Path, source: Path) -> Path:
    """A course directory for plain nbgrader at ``root``, with ``source`` as ps1's source."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "nbgrader_config.py").write_text(PLAIN_CONFIG)
    shutil.copytree(source, root / "source" / ASSIGNMENT)
    return root


def nbgrader_release(source: Path) -> dict[str, nbformat.NotebookNode]:
    """nbgrader's release of the source folder ``source`` (``nbgrader generate_assignment``
    in a scratch course with a plain configuration)."""
    with tempfile.TemporaryDirectory() as scratch:
        course = plain_course(Path(scratch) / "course", source)
        process = plain_nbgrader(course, "generate_assignment", ASSIGNMENT)
        _, log = process.communicate()
        if process.returncode != 0:
            raise RuntimeError(f"nbgrader generate_assignment failed:\n{log}")
        return {name: nbformat.read(course / "release" / ASSIGNMENT / f"{name}.ipynb",
                                    as_version=4) for name in NOTEBOOKS}


# --- the students ---------------------------------------------------------------------------

def _cell(notebook, grade_id):
    return next(c for c in notebook.cells
                if c.metadata.get("nbgrader", {}).get("grade_id") == grade_id)


def _answer(notebook, grade_id, source):
    _cell(notebook, grade_id).source = source.strip("\n")


def _tests(notebook):
    """The autograder-test cells (graded, not answers) of a notebook."""
    return [c for c in notebook.cells
            if c.metadata.get("nbgrader", {}).get("grade")
            and not c.metadata["nbgrader"].get("solution")]


def honest(release):
    """Every question answered correctly, the task done in cells of the student's own."""
    nbs = copy.deepcopy(release)
    p1, p2 = nbs["problem1"], nbs["problem2"]
    _answer(p1, "softmax", '''
import math


def softmax(scores):
    """Weights proportional to exp(score), summing to 1."""
    shift = max(scores)
    weights = [math.exp(score - shift) for score in scores]
    return [w / sum(weights) for w in weights]
''')
    _answer(p1, "weighted_sum", '''
def weighted_sum(values, weights):
    """The sum of the values, each times its weight."""
    total = 0.0
    for value, weight in zip(values, weights):
        total += value * weight
    return total
''')
    _answer(p1, "why_subtract_max",
            "Both the numerator and the denominator get the factor exp(-max), which "
            "cancels. Without the shift, exp of a large score overflows.")
    _answer(p1, "attend", '''
def attend(query, keys, values):
    """Dot-product attention of one query over keys, returning the weighted value."""
    scores = [sum(q * k for q, k in zip(query, key)) for key in keys]
    return weighted_sum(values, softmax(scores))
''')
    task = p1.cells.index(_cell(p1, "temperature_task"))
    p1.cells[task + 1:task + 1] = [
        new_code_cell("for temperature in (0.1, 1, 10):\n"
                      "    print(temperature, softmax([s / temperature for s in "
                      "[1.0, 2.0, 3.0]]))", id="my-temperatures"),
        new_markdown_cell("A low temperature gives nearly hard attention, a high one "
                          "nearly uniform weights.", id="my-remark"),
    ]
    _answer(p2, "hard_attention", '''
def hard_attention(scores):
    """One-hot weights: 1 at the first highest score, 0 elsewhere."""
    weights = [0.0] * len(scores)
    weights[scores.index(max(scores))] = 1.0
    return weights
''')
    _answer(p2, "why_not_differentiable",
            "Choosing the maximum is piecewise constant: its gradient is zero, or undefined "
            "at ties.")
    return nbs


def partial(release):
    """problem1 answered in part (softmax without the shift: 1.5 of the 2 partial-credit
    points; the code answer left as released), problem2 untouched."""
    nbs = copy.deepcopy(release)
    p1 = nbs["problem1"]
    _answer(p1, "softmax", '''
import math


def softmax(scores):
    """Weights proportional to exp(score), summing to 1."""
    exps = [math.exp(s) for s in scores]
    return [e / sum(exps) for e in exps]
''')
    _answer(p1, "weighted_sum", '''
def weighted_sum(values, weights):
    return sum(v * w for v, w in zip(values, weights))
''')
    _answer(p1, "why_subtract_max", "The factor cancels out.")
    return nbs


def wrong(release):
    """Every answer written, every function wrong: what each cheating trick starts from."""
    nbs = copy.deepcopy(release)
    p1, p2 = nbs["problem1"], nbs["problem2"]
    _answer(p1, "softmax", '''
import math


def softmax(scores):
    """Weights proportional to exp(score), summing to 1."""
    return list(scores)
''')
    _answer(p1, "weighted_sum", '''
def weighted_sum(values, weights):
    return sum(values)
''')
    _answer(p1, "why_subtract_max", "I do not know.")
    _answer(p1, "attend", '''
def attend(query, keys, values):
    return values[0]
''')
    _answer(p2, "hard_attention", '''
def hard_attention(scores):
    return [0.0] * len(scores)
''')
    _answer(p2, "why_not_differentiable", "It is not differentiable.")
    return nbs


def hardcoded(release):
    """Answers that return what the visible tests expect: the hidden tests catch them."""
    nbs = wrong(release)
    _answer(nbs["problem1"], "weighted_sum", '''
def weighted_sum(values, weights):
    return 1.5
''')
    _answer(nbs["problem2"], "hard_attention", '''
def hard_attention(scores):
    return [1.0] + [0.0] * (len(scores) - 1) if len(scores) == 2 else [0.0, 1.0, 0.0]
''')
    return nbs


def _hide_tracebacks(replacement):
    """nbgrader's submitted-cheat-attempt(-alternative).ipynb: showtraceback replaced in
    the first answer cell, so that no later error is shown."""
    def cheat(release):
        nbs = wrong(release)
        for notebook in nbs.values():
            first = next(c for c in notebook.cells
                         if c.metadata.get("nbgrader", {}).get("solution"))
            first.source = ("import IPython.core.interactiveshell\n"
                            "IPython.core.interactiveshell.InteractiveShell.showtraceback = "
                            f"{replacement}\n" + first.source)
        return nbs
    return cheat


def fake_outputs(release):
    """Outputs of a passing run stored in the submission: the test cells show no error and
    the partial-credit cell shows full marks."""
    nbs = wrong(release)
    count = 0
    for notebook in nbs.values():
        for cell in notebook.cells:
            if cell.cell_type != "code":
                continue
            count += 1
            cell.execution_count = count
            cell.outputs = []
            if cell.metadata.get("nbgrader", {}).get("grade_id") == "softmax_properties":
                cell.outputs = [new_output("execute_result", {"text/plain": "2.0"},
                                           execution_count=count)]
    return nbs


def edit_locked(release):
    """The locked helper edited to accept anything (nbgrader's
    submitted-locked-cell-changed.ipynb)."""
    nbs = wrong(release)
    _cell(nbs["problem1"], "helpers").source = "def close(a, b, tol=1e-9):\n    return True"
    return nbs


def edit_tests(release, *, checksum=False):
    """Every test cell replaced by one that passes (nbgrader's
    submitted-grade-cell-changed.ipynb); with ``checksum``, each cell's nbgrader checksum
    recomputed to match its new source, so that nothing looks changed."""
    from nbgrader.utils import compute_checksum

    nbs = wrong(release)
    for notebook in nbs.values():
        for cell in _tests(notebook):
            cell.source = ("2.0" if cell.metadata.nbgrader["grade_id"] == "softmax_properties"
                           else "pass")
            if checksum:
                cell.metadata.nbgrader["checksum"] = compute_checksum(cell)
    return nbs


def delete_tests(release):
    """Every test cell deleted (nbgrader's OverwriteCells can add them back)."""
    nbs = wrong(release)
    for notebook in nbs.values():
        notebook.cells = [c for c in notebook.cells if c not in _tests(notebook)]
    return nbs


def duplicate_tests(release):
    """A passing copy of every test cell, with the same grade id, put before it: nbgrader
    keeps the first cell of a grade id (DeduplicateIds)."""
    nbs = wrong(release)
    for notebook in nbs.values():
        for cell in _tests(notebook):
            copy_ = copy.deepcopy(cell)
            copy_.id = cell.id + "-copy"
            copy_.source = "pass"
            notebook.cells.insert(notebook.cells.index(cell), copy_)
    return nbs


def tests_to_markdown(release):
    """Every test cell turned into a markdown cell, so that it does not run (nbgrader's
    submitted-grade-cell-type-changed.ipynb)."""
    nbs = wrong(release)
    for notebook in nbs.values():
        for cell in _tests(notebook):
            cell.cell_type = "markdown"
            del cell["outputs"], cell["execution_count"]
    return nbs


def untag_tests(release):
    """Every test cell's metadata edited to say it is not graded."""
    nbs = wrong(release)
    for notebook in nbs.values():
        for cell in _tests(notebook):
            cell.metadata.nbgrader["grade"] = False
            cell.metadata.nbgrader.pop("points", None)
    return nbs


def raise_points(release):
    """Honest answers, every graded cell's points in the metadata multiplied by 10
    (nbgrader's test_overwrite_points)."""
    nbs = honest(release)
    for notebook in nbs.values():
        for cell in notebook.cells:
            meta = cell.metadata.get("nbgrader", {})
            if "points" in meta:
                meta["points"] = meta["points"] * 10
    return nbs


# student id -> (how the submission is made, None for a fair submission or, for a cheating
# trick, the fair submission it starts from: the same answers without the trick)
STUDENTS = {
    "honest": (honest, None),
    "partial": (partial, None),
    "empty": (copy.deepcopy, None),
    "wrong": (wrong, None),
    "hardcoded": (hardcoded, "wrong"),
    "hide-traceback": (_hide_tracebacks("lambda *args, **kwargs: None"), "wrong"),
    "hide-traceback-none": (_hide_tracebacks("None"), "wrong"),
    "fake-outputs": (fake_outputs, "wrong"),
    "edit-locked": (edit_locked, "wrong"),
    "edit-tests": (edit_tests, "wrong"),
    "edit-tests-checksum": (lambda release: edit_tests(release, checksum=True), "wrong"),
    "delete-tests": (delete_tests, "wrong"),
    "duplicate-tests": (duplicate_tests, "wrong"),
    "tests-to-markdown": (tests_to_markdown, "wrong"),
    "untag-tests": (untag_tests, "wrong"),
    "raise-points": (raise_points, "honest"),
}


def submissions(release: dict[str, nbformat.NotebookNode]
                ) -> dict[str, dict[str, nbformat.NotebookNode]]:
    """Every student's notebooks, made from nbgrader's release of ps1."""
    return {student: make(release) for student, (make, _) in STUDENTS.items()}


def write_submissions(folder: Path, release: dict[str, nbformat.NotebookNode]) -> None:
    """``folder/<student>/ps1/<notebook>.ipynb`` for every student."""
    for student, notebooks in submissions(release).items():
        target = folder / student / ASSIGNMENT
        target.mkdir(parents=True, exist_ok=True)
        for name, notebook in notebooks.items():
            nbformat.write(notebook, target / f"{name}.ipynb")


def _files(folder: Path) -> dict[str, bytes]:
    return {str(p.relative_to(folder)): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true",
                        help="only say whether the committed files are what this writes")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch)
        write_source(out / "source" / ASSIGNMENT)
        write_submissions(out / "submissions",
                          nbgrader_release(out / "source" / ASSIGNMENT))
        stale = [name for name in ("source", "submissions")
                 if _files(out / name) != (_files(HERE / name) if (HERE / name).exists()
                                           else {})]
        if args.check:
            print("stale: " + ", ".join(stale) if stale else "up to date")
            return 1 if stale else 0
        for name in stale:
            shutil.rmtree(HERE / name, ignore_errors=True)
            shutil.copytree(out / name, HERE / name)
            print(f"wrote {HERE / name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
