"""The hostile-content corpus against plain nbgrader: what this course's guards change.

The corpus (every kind in a submission of its own, so that one payload cannot hide
another) is handed in to a ``short-answer`` course configured as plain nbgrader: ``nbgrader
autograde``, ``nbgrader generate_feedback``, ``nbgrader export``, and nbgrader's formgrader
in JupyterLab, as this course ran it before (``jupyter lab`` with nbgrader's server
extension). The same browser visits as test_hostile_content.py record which payloads run
or reach outside the page, surface by surface; the table is written to
``_build/security/hostile-content.md`` for the README's security section. This course's
column is test_hostile_content.py's (``make test``): nothing, on every surface.

``make test-full`` hands in :data:`SAMPLE`, a few kinds that reach every surface (about
3 minutes); ``make security-report`` hands in the whole corpus (161 kinds, about 16 minutes)
and writes the README's numbers.

Plain nbgrader must run payloads here (the watch's witness). Its ``autograde`` runs the
corpus's code outside any sandbox: the code only displays the payloads.
"""

from __future__ import annotations

import csv
import os
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from autograder.course import Course
from tests.conftest import BOOK_OUTPUT
from tests.formgrading import NAME, free_port, make_short_answer_course, serve

from .browsing import visit_feedback, visit_formgrader
from .corpus import ALL
from .hostile import hand_in, name_students
from .payloads import MARKER, fill

pytestmark = [pytest.mark.full, pytest.mark.xdist_group("jupyter")]
BIN = Path(sys.executable).parent
FORMULA = ("=", "+", "-", "@", "\t", "\r")
PLAIN_CONFIG = """c = get_config()  # noqa: F821 -- plain nbgrader, its own defaults
c.CourseDirectory.course_id = "attention-nlp"
c.CourseDirectory.source_directory = "solutions"
c.CourseDirectory.release_directory = "exercises"
"""
SAMPLE = ("img-onerror", "script", "svg-onload", "iframe-srcdoc", "details-ontoggle",
          "javascript-link", "javascript-output", "markdown-output", "png-metadata",
          "html-isolated", "meta-refresh", "css-url", "rt-out-widget-view", "formula-equals",
          "formula-plus", "rt-id-dde-at", "rt-name-hyperlink")
SURFACES = ("formgrader: grading page", "formgrader: students and lists",
            "annotated feedback notebook", "CSV (nbgrader export)")
TABLE = BOOK_OUTPUT / "_build" / "security" / "hostile-content.md"
_WHERE = re.compile(r"^(?P<where>[^:]+(?:: [^:']+)?)")


def _corpus() -> list:
    """The whole corpus for ``make security-report`` (AUTOGRADER_PLAIN_CORPUS=all), else
    :data:`SAMPLE`."""
    if os.environ.get("AUTOGRADER_PLAIN_CORPUS") == "all":
        return list(ALL)
    sample = [payload for payload in ALL if payload.kind in SAMPLE]
    assert len(sample) == len(SAMPLE), "a SAMPLE kind is not in the corpus"
    return sample


def _nbgrader(course: Course, *args: str) -> subprocess.CompletedProcess:
    env = {**os.environ, "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run([str(BIN / "nbgrader"), *args], cwd=course.root, env=env,
                          capture_output=True, text=True, timeout=3600, check=False)


@pytest.fixture(scope="module")
def plain(tmp_path_factory):
    """A class that handed in the corpus, graded, fed back and exported by plain nbgrader."""
    course = make_short_answer_course(tmp_path_factory.mktemp("plain") / "course")
    (course.root / "nbgrader_config.py").write_text(PLAIN_CONFIG)
    corpus = _corpus()
    handed_in = hand_in(course, corpus, per_student=1)
    _nbgrader(course, "autograde", NAME)       # fails for an id nbgrader strips; the rest
    name_students(course, handed_in)
    _nbgrader(course, "generate_feedback", NAME)
    _nbgrader(course, "export")
    return course, handed_in, corpus


def _surface(where: str) -> str:
    if where.startswith("formgrader: grading page"):
        return "formgrader: grading page"
    if where.startswith("formgrader"):
        return "formgrader: students and lists"
    if where.startswith("annotated notebook"):
        return "annotated feedback notebook"
    return where.split(" of ")[0]


def _table(hits: list[str], csv_formulas: dict[str, int]) -> dict[str, dict[str, set]]:
    """{kind: {surface: {place}}} of the hits."""
    table: dict[str, dict[str, set]] = defaultdict(lambda: defaultdict(set))
    for hit in hits:
        found = MARKER.search(hit)
        if found:
            where = _WHERE.match(hit)["where"]
            table[found["kind"]][_surface(where)].add(found["place"])
    for kind, count in csv_formulas.items():
        table[kind]["CSV (nbgrader export)"].add(f"{count} cell(s)")
    return table


def _is_formula(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return True
    return False


def test_plain_nbgrader_runs_what_the_course_does_not(plain, browser, tmp_path):
    course, handed_in, corpus = plain
    command = [str(BIN / "jupyter"), "lab", "--no-browser", "--ip=127.0.0.1",
               f"--port={free_port()}", "--ServerApp.root_dir=.",
               "--LabApp.default_url=/formgrader",
               *(["--allow-root"] if os.getuid() == 0 else [])]
    with serve(command, tmp_path, cwd=course.root) as server:
        formgrader = visit_formgrader(browser, server["url"], course, handed_in, honest=False)
    feedback = visit_feedback(browser, course, handed_in, honest=False, summaries=False)
    formulas = _formula_cells(course, corpus)
    table = _table(formgrader.fired + feedback.fired, formulas)
    _write(table, formgrader.left + feedback.left, corpus)
    fired = {kind for kind, surfaces in table.items() if surfaces}
    assert len(fired) >= len(corpus) // 2, sorted(fired)   # plain nbgrader is open to it
    for surface in SURFACES:        # on every surface (the CSV: the ids' formulas as they are)
        assert any(surface in surfaces for surfaces in table.values()), surface


def _formula_cells(course: Course, corpus: list) -> dict[str, int]:
    """{payload kind: cells of plain nbgrader's grades.csv holding its id or name (as the
    class handed them in) as a formula}."""
    texts = {}
    for payload in corpus:
        for text, place in ((payload.ident, "id"), (payload.name, "first"),
                            (payload.name, "last")):
            if text:
                filled = fill(text, payload.kind, place)
                if filled.startswith(FORMULA):
                    texts[filled] = payload.kind
    counts: dict[str, int] = defaultdict(int)
    with (course.root / "grades.csv").open(newline="") as handle:
        for row in csv.reader(handle):
            for cell in row:
                if cell in texts and _is_formula(cell):
                    counts[texts[cell]] += 1
    return dict(counts)


def _write(table: dict[str, dict[str, set]], left: list[str], corpus: list) -> None:
    surfaces = list(SURFACES)
    lines = ["| payload kind | " + " | ".join(surfaces) + " |",
             "| --- |" + " --- |" * len(surfaces)]
    kinds = sorted({p.kind for p in corpus})
    for kind in kinds:
        cells = [", ".join(sorted(table.get(kind, {}).get(s, set()))) or "—" for s in surfaces]
        lines.append(f"| `{kind}` | " + " | ".join(cells) + " |")
    fired = {kind for kind in kinds if table.get(kind)}
    per_surface = {s: sum(1 for k in kinds if table.get(k, {}).get(s)) for s in surfaces}
    summary = (f"Plain nbgrader: {len(fired)} of {len(kinds)} payload kinds acted "
               f"(ran a script, made a request, or are a formula in the CSV); by surface: "
               + ", ".join(f"{s} {n}" for s, n in per_surface.items())
               + f". Requests that left a page: {len(left)}. This course: 0 on every surface "
               "(tests/grader/display/test_hostile_content.py).")
    TABLE.parent.mkdir(parents=True, exist_ok=True)
    TABLE.write_text(summary + "\n\n" + "\n".join(lines) + "\n")
    print(summary)
