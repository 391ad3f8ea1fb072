"""The Content-Security-Policy of every page that shows what a student handed in.

The sanitiser (:mod:`.html`, :mod:`.notebook`) removes what could act; these policies are
the second wall, so that anything that slipped past it still cannot run a script, load a
resource from elsewhere, submit a form or reframe the page. One policy per kind of page:

* :data:`PAGE` — pages the course writes that need no script at all: a feedback page's
  summary (``index.html``) and the class report. Images only from ``data:`` URLs.
* :data:`NOTEBOOK` — an annotated notebook written beside the feedback page: scripts
  only from files beside it (MathJax, see :mod:`.mathjax`), no inline script or handler.
* :func:`server` — the formgrader's pages: scripts from the server's own origin, plus the
  inline scripts of nbgrader's own templates, which carry the response's nonce (and the
  three ``onclick`` attributes of nbgrader's templates, by hash); requests to the server
  only.
* :data:`FILE` — a file of a submission served on its own (an image the notebook shows):
  sandboxed, so that even an SVG opened as a page runs nothing.

A ``<meta>`` policy (:func:`meta`) is how a file opened from disk gets one; a server sends
the same text as a header.
"""

from __future__ import annotations

from collections.abc import Iterable
from html import escape

_CLOSED = ["base-uri 'none'", "form-action 'none'", "object-src 'none'"]

PAGE = "; ".join(["default-src 'none'", "img-src data:", "style-src 'unsafe-inline'",
                  *_CLOSED])
NOTEBOOK = "; ".join(["default-src 'none'", "script-src 'self'", "img-src 'self' data:",
                      "style-src 'self' 'unsafe-inline'", "font-src 'self' data:", *_CLOSED])
FILE = "; ".join(["default-src 'none'", "img-src 'self' data:", "style-src 'unsafe-inline'",
                  "sandbox"])


def server(nonce: str | None = None, handler_hashes: Iterable[str] = ()) -> str:
    """The formgrader's policy for one response: scripts from the server; inline scripts
    only with ``nonce`` (none without one); the inline event handlers whose SHA-256
    (base64) is in ``handler_hashes``."""
    hashes = [f"'sha256-{digest}'" for digest in sorted(set(handler_hashes))]
    scripts = ["'self'", *([f"'nonce-{nonce}'"] if nonce else []),
               *(["'unsafe-hashes'", *hashes] if hashes else [])]
    return "; ".join(["default-src 'none'", f"script-src {' '.join(scripts)}",
                      "style-src 'self' 'unsafe-inline'", "img-src 'self' data:",
                      "font-src 'self' data:", "connect-src 'self'",
                      "frame-ancestors 'none'", *_CLOSED])


def meta(policy: str) -> str:
    """The ``<meta>`` element that applies ``policy`` to the page it heads."""
    return f'<meta http-equiv="Content-Security-Policy" content="{escape(policy)}">'
