"""A notebook a student handed in, made inert for display: :func:`inert_notebook`.

nbconvert's HTML templates put parts of a notebook into a page as they are: an output's
``text/html`` or ``application/javascript``, a widget's state, an image's ``width`` (unquoted),
a raw cell, a file name from an output's metadata, the lexer a cell's metadata names. Before
a submission is rendered for a person (nbgrader's formgrader, the feedback pages), every
part of it is reduced to what can be shown safely:

* outputs keep only text, HTML (cleaned by :func:`~.html.clean_html`), markdown (cleaned
  once rendered), LaTeX, and PNG, JPEG, GIF or SVG images whose data is base64 (an SVG is
  shown as an ``<img>``, where it cannot run or load anything); an output with nothing
  left says which kinds of output it had, so the grader knows something was there;
* image metadata keeps numeric ``width``/``height`` and a text ``alt``; any other metadata
  of an output, a cell (but nbgrader's, and tags made of letters, digits, ``-`` and
  ``_``) or the notebook (but its kernel, language and the course's own) is dropped;
* pasted images (a markdown cell's attachments) keep one image type each, base64-checked;
* an output type, stream name, cell type or cell id nbformat does not define is dropped
  or replaced.

The notebook's text — answers, code, error messages — is untouched: the templates escape
code and text, and markdown is cleaned after it is rendered (:mod:`.exporter`).
"""

from __future__ import annotations

import base64
import binascii
import copy
import math
import re

from nbconvert.preprocessors import Preprocessor
from nbformat import NotebookNode

from .html import clean_html

IMAGE_TYPES = ("image/png", "image/jpeg", "image/gif")
SHOWN_TYPES = ("text/html", "text/markdown", "text/latex", "image/svg+xml", *IMAGE_TYPES,
               "text/plain")
_TOKEN = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
_GRADE_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")
_COURSE_KEY = "attention_course"     # the course's own notebook metadata (its language)
_LANGUAGE = re.compile(r"^[a-z]{2}(?:_[A-Z]{2})?$")


def _base64(value: object) -> str | None:
    """``value`` as base64 text without whitespace, or None if it is not base64."""
    if isinstance(value, list):
        value = "".join(str(part) for part in value)
    if not isinstance(value, str):
        return None
    compact = "".join(value.split())
    try:
        base64.b64decode(compact, validate=True)
    except (binascii.Error, ValueError):
        return None
    return compact


def _text(value: object) -> str | None:
    if isinstance(value, list):
        value = "".join(str(part) for part in value)
    return value if isinstance(value, str) else None


def _size(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return int(value) if math.isfinite(value) and 0 < value < 100_000 else None


def _image_metadata(metadata: object) -> dict:
    kept: dict = {}
    if isinstance(metadata, dict):
        for key in ("width", "height"):
            size = _size(metadata.get(key))
            if size is not None:
                kept[key] = size
        alt = _text(metadata.get("alt"))
        if alt:
            kept["alt"] = alt
    return kept


def _bundle(data: object, metadata: object) -> tuple[dict, dict, list[str]]:
    """(data, metadata, the mime types left out) of a display bundle, made inert."""
    data = data if isinstance(data, dict) else {}
    metadata = metadata if isinstance(metadata, dict) else {}
    kept, kept_metadata = {}, {}
    for mime in SHOWN_TYPES:
        if mime not in data:
            continue
        if mime in IMAGE_TYPES:
            value = _base64(data[mime])
            if value is not None:
                kept[mime] = value
                image_metadata = _image_metadata(metadata.get(mime))
                if image_metadata:
                    kept_metadata[mime] = image_metadata
        elif mime == "image/svg+xml":
            value = _text(data[mime])
            if value is not None:          # shown base64-encoded in an <img> by nbconvert
                kept[mime] = value
        else:
            value = _text(data[mime])
            if value is not None:
                kept[mime] = clean_html(value) if mime == "text/html" else value
    left_out = sorted(str(mime) for mime in data if mime not in kept)
    return kept, kept_metadata, left_out


def _output(output: object) -> NotebookNode | None:
    if not isinstance(output, dict):
        return None
    kind = output.get("output_type")
    if kind == "stream":
        name = output.get("name") if output.get("name") in ("stdout", "stderr") else "stdout"
        return NotebookNode(output_type="stream", name=name, text=_text(output.get("text")) or "")
    if kind == "error":
        trace = output.get("traceback")
        return NotebookNode(output_type="error", ename=_text(output.get("ename")) or "",
                            evalue=_text(output.get("evalue")) or "",
                            traceback=[str(line) for line in trace]
                            if isinstance(trace, list) else [])
    if kind not in ("display_data", "execute_result"):
        return None
    data, metadata, left_out = _bundle(output.get("data"), output.get("metadata"))
    if not data:
        kinds = ", ".join(left_out) or "nothing"
        data = {"text/plain": f"[an output not shown here: {kinds}]"}
    inert = NotebookNode(output_type=kind, data=NotebookNode(data),
                         metadata=NotebookNode(metadata))
    if kind == "execute_result":
        count = output.get("execution_count")
        inert.execution_count = count if isinstance(count, int) and \
            not isinstance(count, bool) else None
    return inert


def _attachments(attachments: object) -> NotebookNode:
    kept = NotebookNode()
    if not isinstance(attachments, dict):
        return kept
    for name, bundle in attachments.items():
        if not isinstance(name, str) or not isinstance(bundle, dict):
            continue
        for mime in (*IMAGE_TYPES, "image/svg+xml"):
            value = bundle.get(mime)
            if mime == "image/svg+xml" and isinstance(value, str):
                value = base64.b64encode(value.encode()).decode() \
                    if value.lstrip().startswith("<") else _base64(value)
            else:
                value = _base64(value)
            if value is not None:
                kept[name] = NotebookNode({mime: value})
                break
    return kept


def _nbgrader(metadata: object) -> dict | None:
    """nbgrader's cell metadata if it names its cell with a plain id (the course's cells,
    put back as released before grading, always do)."""
    if not isinstance(metadata, dict):
        return None
    grade_id = metadata.get("grade_id")
    if grade_id is not None and not (isinstance(grade_id, str) and _GRADE_ID.match(grade_id)):
        return None
    return copy.deepcopy(metadata)


def _cell(cell: object, index: int) -> NotebookNode | None:
    if not isinstance(cell, dict) or cell.get("cell_type") not in ("code", "markdown", "raw"):
        return None
    kind = cell["cell_type"]
    inert = NotebookNode(cell_type=kind, source=_text(cell.get("source")) or "",
                         metadata=NotebookNode())
    cell_id = cell.get("id")
    inert.id = cell_id if isinstance(cell_id, str) and _TOKEN.match(cell_id) \
        else f"cell-{index}"
    metadata = cell.get("metadata") if isinstance(cell.get("metadata"), dict) else {}
    nbgrader = _nbgrader(metadata.get("nbgrader"))
    if nbgrader is not None:
        inert.metadata.nbgrader = NotebookNode(nbgrader)
    tags = metadata.get("tags")
    if isinstance(tags, list):
        tags = [tag for tag in tags if isinstance(tag, str) and _TOKEN.match(tag)]
        if tags:
            inert.metadata.tags = tags
    if kind == "code":
        count = cell.get("execution_count")
        inert.execution_count = count if isinstance(count, int) and \
            not isinstance(count, bool) else None
        outputs = cell.get("outputs") if isinstance(cell.get("outputs"), list) else []
        inert.outputs = [o for o in map(_output, outputs) if o is not None]
    else:
        attachments = _attachments(cell.get("attachments"))
        if attachments:
            inert.attachments = attachments
    return inert


def inert_notebook(notebook: dict) -> NotebookNode:
    """A copy of ``notebook`` (as nbformat reads it, version 4) reduced to what a person can
    be shown safely: see the module's docstring. ``notebook`` is not changed."""
    cells = notebook.get("cells") if isinstance(notebook.get("cells"), list) else []
    metadata = notebook.get("metadata") if isinstance(notebook.get("metadata"), dict) else {}
    kept = NotebookNode(kernelspec=NotebookNode(name="python3", display_name="Python 3",
                                                language="python"),
                        language_info=NotebookNode(name="python"))
    course = metadata.get(_COURSE_KEY)
    if isinstance(course, dict) and isinstance(course.get("language"), str) \
            and _LANGUAGE.match(course["language"]):
        kept[_COURSE_KEY] = NotebookNode(language=course["language"])
    return NotebookNode(
        nbformat=4, nbformat_minor=5, metadata=kept,
        cells=[c for c in (_cell(cell, i) for i, cell in enumerate(cells)) if c is not None])


class InertNotebook(Preprocessor):
    """nbconvert's step that replaces the notebook by :func:`inert_notebook`'s copy: the
    first step of every export of a student's notebook to HTML."""

    def preprocess(self, nb: NotebookNode, resources: dict) -> tuple[NotebookNode, dict]:
        return inert_notebook(nb), resources
