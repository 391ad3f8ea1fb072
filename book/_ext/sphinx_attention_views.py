"""Sphinx extension: the JavaScript of the interactive attention views, served by the site.

A view (``attention_course.attention_view``) executed while the book is built carries its
data and a few lines of script, not the 0.9 MB of Vega, Vega-Lite and vega-embed that draw
it. This extension writes that bundle once, from the installed ``vl-convert-python``, to
``_static/attention-view/vega-bundle.js``, and adds it (deferred) to the pages that hold a
view and only to them. Every view of the site shares one file, which a browser caches, and
nothing is loaded from a CDN: the pages work from disk and offline.
"""

from __future__ import annotations

from pathlib import Path

from sphinx.application import Sphinx

from attention_course.attention_view import BUNDLE_PATH, javascript_bundle

MARKER = "data-attention-view"


def add_bundle_to_pages_with_a_view(app: Sphinx, pagename: str, templatename: str,
                                    context: dict, doctree) -> None:
    if MARKER in context.get("body", ""):
        app.add_js_file(BUNDLE_PATH, loading_method="defer")


def write_bundle(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    target = Path(app.outdir) / "_static" / BUNDLE_PATH
    target.parent.mkdir(parents=True, exist_ok=True)
    code = javascript_bundle()
    if not target.exists() or target.read_text() != code:
        target.write_text(code)


def setup(app: Sphinx) -> dict:
    app.connect("html-page-context", add_bundle_to_pages_with_a_view)
    app.connect("build-finished", write_bundle)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
