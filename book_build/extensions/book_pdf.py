"""Sphinx extension: the book's PDF in the site's language, served by the site and offered
first in every page's download menu.

:mod:`book_build.pdf` prints each edition to ``_build/pdf/`` before the websites are built
(``make book``); this extension copies the edition's PDF into the site's root and links it.
A website built without its PDF is an error that says how to make it, not a dead link.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.errors import ExtensionError

from ..paths import output_root_of, pdf_path
from .interface_words import words


def book_pdf(app: Sphinx) -> Path:
    """The PDF of the edition this build writes."""
    return pdf_path(app.config.language or "en", output_root_of(Path(app.outdir)))


def is_site(app: Sphinx) -> bool:
    """Whether this build writes the website (not the single page the PDF is printed from)."""
    return app.builder.name == "html"


def require_the_pdf(app: Sphinx) -> None:
    if is_site(app) and not book_pdf(app).is_file():
        raise ExtensionError(f"the book's PDF {book_pdf(app)} is missing: `python -m "
                             "book_build.pdf` prints it (`make book` does it first)")


def link_the_pdf(app: Sphinx, pagename: str, templatename: str, context: dict,
                 doctree) -> None:
    if not is_site(app):
        return
    for group in context.get("header_buttons") or []:
        if group.get("label") == "download-buttons":
            label = str(words("The whole book as one PDF"))
            group["buttons"].insert(0, {
                "type": "link", "url": context["pathto"](book_pdf(app).name, 1),
                "text": label, "tooltip": label, "icon": "fas fa-book",
                "label": "download-book-pdf-button",
            })


def copy_the_pdf(app: Sphinx, exception: Exception | None) -> None:
    if exception is None and is_site(app):
        shutil.copyfile(book_pdf(app), Path(app.outdir) / book_pdf(app).name)


def setup(app: Sphinx) -> dict:
    app.connect("builder-inited", require_the_pdf)
    # after sphinx-book-theme's buttons (501) and the exercise's and chapter's (502)
    app.connect("html-page-context", link_the_pdf, priority=503)
    app.connect("build-finished", copy_the_pdf)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
