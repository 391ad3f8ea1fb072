"""A class that hands in the hostile-content corpus, and a browser that watches for it.

:func:`hand_in` puts the corpus into a ``short-answer`` course (tests/formgrading.py):
students ``hostile-<n>`` each hand in a correct notebook that also carries a group of
payloads — each in the written answer, in a markdown cell of their own and as the output of
a code cell of their own, with an honest sentence, formula and printed line beside them —
and one honest submission per payload meant for an id is handed in under that id. Names
go into the gradebook after grading (:func:`name_students`). :class:`Watch` records what a
page does that only a payload would: a dialog, a console message or a request carrying the
payloads' mark, and any request that leaves the page's own origin or folder.
"""

from __future__ import annotations

import base64
import io
import json
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
from nbformat.v4 import new_code_cell, new_markdown_cell, new_raw_cell
from nbgrader.api import Gradebook

from autograder.course import Course
from tests.formgrading import ESSAY, answered, submit

from .payloads import MARK, Payload, fill, fill_all


def _plot() -> str:
    """A small PNG, as a student pastes a plot into an answer (base64)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(1.2, 0.8), dpi=50)
    axes.plot([0, 1, 2], [0, 1, 4])
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    plt.close(figure)
    return base64.b64encode(buffer.getvalue()).decode()


PLOT = _plot()

HONEST = "honest-student"
PASTED = "pasted.png"        # the image the honest student pasted into their answer


def honest_text(label: str) -> str:
    """A written answer's honest part: a sentence and a formula, unique to ``label``."""
    return f"Honest answer of {label}: doubling is additive, $d(x+y) = d(x) + d(y)$."


def honest_print(label: str) -> str:
    return f"honest output of {label}"


def _markdown_cell(payload: Payload, place: str) -> nbformat.NotebookNode:
    text = fill(payload.markdown or "", payload.kind, place)
    parts = fill_all(payload.cell, payload.kind, place)
    cell = new_raw_cell(text) if parts.get("raw") else new_markdown_cell(text)
    cell.metadata.update(parts.get("metadata", {}))
    if parts.get("attachments") and not parts.get("raw"):
        cell.attachments = parts["attachments"]
    return cell


def _output_cell(payload: Payload) -> nbformat.NotebookNode:
    bundle = json.dumps(fill_all(payload.output, payload.kind, "output"))
    return new_code_cell(
        "import json\nfrom IPython.display import display\n"
        f"bundle = json.loads({bundle!r})\n"
        'display(bundle["data"], raw=True, metadata=bundle["metadata"])')


def hostile_notebook(course: Course, label: str, payloads: list[Payload]) -> nbformat.NotebookNode:
    """A correct ``short-answer`` notebook carrying ``payloads`` in every place a student
    controls, beside honest text, math and output labelled ``label``."""
    answer = [honest_text(label)] + [fill(p.markdown, p.kind, "answer")
                                     for p in payloads if p.markdown]
    notebook = answered(course, "x + x", "\n\n".join(answer))
    essay = next(c for c in notebook.cells
                 if c.metadata.get("nbgrader", {}).get("grade_id") == ESSAY)
    for payload in payloads:
        attachments = fill_all(payload.cell, payload.kind, "answer").get("attachments")
        if attachments and not payload.cell.get("raw"):
            essay.attachments = {**essay.get("attachments", {}), **attachments}
    added = [new_code_cell(f"print({honest_print(label)!r})")]
    for payload in payloads:
        if payload.markdown or payload.cell:
            added.append(_markdown_cell(payload, "cell"))
        if payload.output:
            added.append(_output_cell(payload))
    notebook.cells.extend(added)
    return notebook


@dataclass
class Class:
    """Who handed in what: ``groups`` {student: payloads}, ``idents`` {student: payload},
    ``names`` {student: payload of their name}."""

    groups: dict[str, list[Payload]]
    idents: dict[str, Payload]
    names: dict[str, Payload] = field(default_factory=dict)

    @property
    def students(self) -> list[str]:
        return [HONEST, *self.groups, *self.idents]

    def label(self, student: str) -> str:
        """What the student's honest text is labelled with (never their hostile id)."""
        return f"the id of {self.idents[student].kind}" if student in self.idents else student


def hand_in(course: Course, corpus: list[Payload], per_student: int) -> Class:
    """Submit ``corpus``, ``per_student`` payloads to a hostile student, each id payload
    as an honest student's id, and one honest submission."""
    honest = answered(course, "x + x", f"{honest_text(HONEST)}\n\n![my plot](attachment:{PASTED})")
    next(c for c in honest.cells if c.metadata.get("nbgrader", {}).get("grade_id") == ESSAY
         ).attachments = {PASTED: {"image/png": PLOT}}
    submit(course, HONEST, honest)
    placed = [p for p in corpus if p.markdown or p.output or p.cell]
    groups = {f"hostile-{n:02d}": placed[i:i + per_student]
              for n, i in enumerate(range(0, len(placed), per_student))}
    for student, payloads in groups.items():
        submit(course, student, hostile_notebook(course, student, payloads))
    idents = {fill(p.ident, p.kind, "id"): p for p in corpus if p.ident}
    for student, payload in idents.items():
        submit(course, student,
               answered(course, "x + x", honest_text(f"the id of {payload.kind}")))
    named = [p for p in corpus if p.name]
    names = {}
    targets = [*groups, *idents] or [HONEST]
    for n, payload in enumerate(named):
        names[targets[n % len(targets)]] = payload
    return Class(groups, idents, names)


def name_students(course: Course, handed_in: Class) -> None:
    """Give the students their (hostile) names in the gradebook, as an LMS roster would."""
    with Gradebook(course.db_url) as gb:
        for student, payload in handed_in.names.items():
            gb.update_or_create_student(student,
                                        first_name=fill(payload.name, payload.kind, "first"),
                                        last_name=fill(payload.name, payload.kind, "last"))


@dataclass
class Watch:
    """What a page did that only a payload would, and requests that left it."""

    allowed: tuple[str, ...]           # URL prefixes a page may request
    fired: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)
    where: str = ""

    def attach(self, page) -> None:
        """Watch ``page``, any page it opens, and every request of its browser context
        (a window a payload opens makes its requests there)."""
        self._page(page)
        page.context.on("request", self._request)
        page.context.on("page", self._popup)

    def _page(self, page) -> None:
        page.on("dialog", self._dialog)
        page.on("console", lambda message: self._seen(message.text, "console"))

    def _popup(self, page) -> None:
        self._seen(page.url, "popup")
        self.left.append(f"{self.where}: a window opened ({page.url[:120]})")
        self._page(page)

    def _dialog(self, dialog) -> None:
        self._seen(dialog.message, "dialog")
        dialog.dismiss()

    def _request(self, request) -> None:
        url = request.url
        self._seen(url, "request")
        if not url.startswith(self.allowed) and not url.startswith(("data:", "blob:")):
            self.left.append(f"{self.where}: {url[:160]}")

    def _seen(self, text: str, how: str) -> None:
        if MARK in text:
            self.fired.append(f"{self.where}: {how}: {text[:160]}")


def feedback_pages(course: Course, student: str) -> tuple[Path, Path]:
    """(summary, annotated notebook) of ``student``'s feedback."""
    folder = course.feedback / student / "short-answer"
    return folder / "index.html", folder / "short-answer.html"
