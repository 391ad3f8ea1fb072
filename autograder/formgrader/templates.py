"""nbgrader's formgrader pages, rendered so that a value from a student cannot act in them.

nbgrader renders its management pages (gradebook, students, assignments) with Jinja and no
autoescaping, and writes values — a student id taken from the URL or the gradebook, an
assignment name — into HTML and into inline scripts as they are: a student id holding
``<img src=x onerror=…>`` runs in the grader's browser. :func:`environment` renders the same
templates with autoescaping, and :class:`NoncedTemplates` changes each template's source as
it is loaded: every inline ``<script>`` gets the response's nonce (the server's
Content-Security-Policy runs no other inline script), and a value written into a script as
a JavaScript string (``"{{ student_id }}"``) is written as JSON (``{{ student_id|tojson }}``),
which cannot end the string or the script. :func:`handler_hashes` are the SHA-256 digests
of the templates' inline event handlers (one ``onclick``), which the policy allows by hash.
"""

from __future__ import annotations

import base64
import hashlib
import re
from functools import cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader

_INLINE_SCRIPT = re.compile(r"<script>(.*?)</script>", re.DOTALL)
_JS_STRING_VALUE = re.compile(r'"\{\{\s*([A-Za-z_][\w.]*)\s*\}\}"')
_HANDLER = re.compile(r"""\son[a-z]+="([^"]*)\"""")
NONCE = "csp_nonce"


def _nonced(match: re.Match) -> str:
    body = _JS_STRING_VALUE.sub(r"{{ \1|tojson }}", match.group(1))
    return f'<script nonce="{{{{ {NONCE} }}}}">{body}</script>'


class NoncedTemplates(FileSystemLoader):
    """nbgrader's templates, each inline script given the response's nonce
    (``csp_nonce``) and its string values written as JSON."""

    def get_source(self, environment, template):
        source, filename, uptodate = super().get_source(environment, template)
        return _INLINE_SCRIPT.sub(_nonced, source), filename, uptodate


def environment(template_dir: str | Path) -> Environment:
    """The Jinja environment for nbgrader's formgrader templates in ``template_dir``:
    autoescaped, inline scripts nonced (:class:`NoncedTemplates`)."""
    return Environment(loader=NoncedTemplates(str(template_dir)), autoescape=True)


@cache
def handler_hashes(template_dir: str | Path) -> tuple[str, ...]:
    """Base64 SHA-256 of every inline event handler in the templates of ``template_dir``
    (what a Content-Security-Policy's ``'unsafe-hashes'`` source lists)."""
    digests = set()
    for path in Path(template_dir).glob("*.tpl"):
        for handler in _HANDLER.findall(path.read_text()):
            digests.add(base64.b64encode(hashlib.sha256(handler.encode()).digest()).decode())
    return tuple(sorted(digests))
