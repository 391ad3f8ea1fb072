"""How a payload of hostile content is written, placed, and reports that it ran.

A :class:`Payload` is one kind of attack, written once and placed where a student controls
what a grader sees:

* ``markdown`` — in a written answer graded by hand, and in a markdown cell the student
  adds (nbconvert renders markdown with its raw HTML);
* ``output`` — as what a code cell of the student displays: a display bundle (data by
  MIME type, and metadata), as ``IPython.display`` sends it;
* ``ident`` — as a student id, i.e. a folder of ``submitted/``, which cannot hold ``/``;
  payloads that need a ``/`` go into the student's name in the gradebook instead
  (``name``), as an LMS would give it;
* ``cell`` — cell-level parts (metadata, attachments) of the markdown cell it is put in.

Each payload text may use placeholders, filled per kind and place by :func:`fill`:

* ``{js}`` — JavaScript that reports that it ran: ``alert("pwned-<kind>--<place>")`` and a
  request to ``pwned-<kind>--<place>`` (relative to the page), written without quotes,
  spaces or commas, so that it fits an unquoted attribute, a cell tag and markdown alike
  (in an id, a folder name, without a slash: the dialog only);
* ``{url}`` — ``http://127.0.0.1:9/pwned-<kind>--<place>``: a request to it means that
  something left the page;
* ``{b64html}`` — base64 of ``<script>{js}</script>`` (for ``data:`` URLs);
* ``{entities}`` — ``{js}`` written as HTML character references;
* ``{png}`` — a real 1×1 PNG, base64.

The test (test_hostile_content.py) watches every page for a dialog, a console message or
a request carrying ``pwned``; a payload that ``click``\\s needs the links, summaries and
buttons of the student's content clicked. The payloads themselves are in corpus.py (ours)
and red_team.py (written apart, from the issue alone).
"""

from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field

BEACON = "http://127.0.0.1:9/"
MARK = "pwned"
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/"
       "PchI7wAAAABJRU5ErkJggg==")


@dataclass(frozen=True)
class Payload:
    kind: str                          # a slug: letters, digits, hyphens
    markdown: str | None = None        # a written answer's (and an added cell's) text
    output: dict | None = None         # {"data": {mime: value}, "metadata": {...}}
    ident: str | None = None           # a student id (no "/")
    name: str | None = None            # a student's name in the gradebook
    cell: dict = field(default_factory=dict)   # the cell's own "metadata"/"attachments"
    click: bool = False                # acts only when the grader clicks


def marker(kind: str, place: str) -> str:
    """``pwned-<kind>--<place>``: kinds hold single hyphens only, so the two parts read
    back unambiguously (see :data:`MARKER`)."""
    return f"{MARK}-{kind}--{place}"


MARKER = re.compile(rf"{MARK}-(?P<kind>[a-z0-9-]+?)--(?P<place>[a-z]+)")


def _codes(text: str) -> str:
    return "String.fromCharCode(" + ",".join(str(ord(c)) for c in text) + ")"


def js(kind: str, place: str) -> str:
    """JavaScript that reports it ran, with no quotes, spaces or commas (a cell tag may not
    hold one): a dialog and a request, both carrying the mark. In an id, a file name, it
    has no slash either (and raises the dialog only)."""
    mark = marker(kind, place)
    if place == "id":
        return f"alert({_codes(mark)})"
    return f"alert(/{mark}/.source);fetch(/{mark}/.source)"


def fill(text: str, kind: str, place: str) -> str:
    """``text`` with its placeholders filled for ``kind`` at ``place``."""
    script = js(kind, place)
    values = {
        "{js}": script,
        "{url}": BEACON + marker(kind, place),
        "{b64html}": base64.b64encode(f"<script>{script}</script>".encode()).decode(),
        "{entities}": "".join(f"&#{ord(c)};" for c in script),
        "{png}": PNG,
    }
    for placeholder, value in values.items():
        text = text.replace(placeholder, value)
    return text


def fill_all(value, kind: str, place: str):
    """:func:`fill` through a JSON-like structure (an output bundle, cell metadata)."""
    if isinstance(value, str):
        return fill(value, kind, place)
    if isinstance(value, list):
        return [fill_all(v, kind, place) for v in value]
    if isinstance(value, dict):
        return {fill(k, kind, place): fill_all(v, kind, place) for k, v in value.items()}
    return value


def html(markup: str) -> dict:
    """A display bundle of ``markup`` as HTML (``IPython.display.HTML``)."""
    return {"data": {"text/html": markup, "text/plain": "<HTML>"}, "metadata": {}}


