"""Sphinx extension: the JavaScript of the interactive attention views, served by the site.

A view (``attention_course.attention_view``) executed while the book is built carries its
data and a few lines of script, not the 0.9 MB of Vega, Vega-Lite and vega-embed that draw
it. This extension writes that bundle once, from the installed ``vl-convert-python``, to
``_static/attention-view/vega-bundle.js``, and adds it (deferred) to the pages that hold a
view and only to them. Every view of the site shares one file, which a browser caches, and
nothing is loaded from a CDN: the pages work from disk and offline.

In a build in another language (Sphinx's ``language``, e.g. ``zh_CN``), the views' menus,
headings and titles are translated from that language's figure catalogue
``<locale_dirs>/<language>/LC_MESSAGES/figures.po``, the catalogue of the figures' strings
(:mod:`book_build.figures.translation`); a string without a translation is a warning.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx.application import Sphinx
from sphinx.util import logging

from attention_course.attention_view import (
    BUNDLE_PATH,
    MARKER,
    javascript_bundle,
    translate_view,
)
from autograder.course.catalogues import translated_entries
from autograder.course.languages import ENGLISH

from ..figures.translation import CATALOGUE, needs_translation, translate

logger = logging.getLogger(__name__)



def add_bundle_to_pages_with_a_view(app: Sphinx, pagename: str, templatename: str,
                                    context: dict, doctree) -> None:
    if MARKER in context.get("body", ""):
        app.add_js_file(BUNDLE_PATH, loading_method="defer")


def view_translations(app: Sphinx) -> dict[str, str] | None:
    """The figure catalogue's translations for the build's language; None in English."""
    language = app.config.language or ENGLISH
    if language.split("_")[0] == ENGLISH:
        return None
    translations: dict[str, str] = {}
    for folder in app.config.locale_dirs:
        path = Path(app.srcdir, folder, language, "LC_MESSAGES", CATALOGUE)
        if path.is_file():
            translations.update(translated_entries(path))
    return translations


def translate_views(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    translations = view_translations(app)
    if translations is None:
        return
    for node in list(doctree.findall(nodes.raw)):
        if MARKER not in node.astext():
            continue
        html, record = translate_view(node.astext(), lambda s: translate(s, translations))
        missing = [text for role, text, translation in record
                   if translation is None and needs_translation(role, text)]
        if missing:
            logger.warning(f"attention view without a {app.config.language} translation of "
                           f"{missing} ({CATALOGUE})", location=node,
                           type="attention_view", subtype="i18n")
        node.replace(node.children[0], nodes.Text(html))


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
    app.connect("doctree-resolved", translate_views)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
