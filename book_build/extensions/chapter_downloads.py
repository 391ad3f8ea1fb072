"""Sphinx extension: every chapter as a notebook a student can run, and the package it needs.

- **The chapter's notebook.** Each chapter page (a MyST notebook outside ``exercises/``) is
  written next to its page as ``<page>.ipynb``, a plain Jupyter notebook in the site's
  language (:mod:`book_build.chapter_notebooks`), and offered by the page's download
  button as ``.ipynb``. Sphinx itself says what the page shows for each reference: the
  title of a page, an equation's or figure's number, a citation.
- **The course's package.** ``attention_course-<version>-py3-none-any.whl``
  (:mod:`book_build.student_package`) is written at the root of the site, and the role
  ``{course-package}`text``` links to it from any page (*Running the chapters yourself*).
"""

from __future__ import annotations

import posixpath
from pathlib import Path

import nbformat
from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.directives.code import LiteralIncludeReader
from sphinx.util import logging
from sphinx.util.docutils import SphinxRole
from sphinx.util.i18n import get_image_filename_for_language

from autograder.commands.translation import translate_markdown
from autograder.course.catalogues import translated_entries

from ..chapter_notebooks import plain_notebook
from ..student_package import build_wheel, wheel_name
from ..toc import is_notebook
from .download_buttons import add_download
from .interface_words import words

EXERCISES = "exercises/"
logger = logging.getLogger(__name__)
# role -> (Sphinx domain, reference type); a {term} shows its own text
_XREFS = {"doc": ("std", "doc"), "ref": ("std", "ref"), "numref": ("std", "numref"),
          "eq": ("math", "eq"), "cite:p": ("cite", "p"), "cite:t": ("cite", "t")}
_LOWERCASE = {"ref", "numref"}    # Sphinx's labels are lower case


def chapter_source(app: Sphinx, docname: str) -> Path | None:
    """The MyST notebook of the chapter page ``docname``; None for any other page."""
    if docname.startswith(EXERCISES):
        return None
    source = Path(app.env.doc2path(docname))
    return source if source.suffix == ".md" and is_notebook(source) else None


class SphinxResolver:
    """What the page ``docname`` shows, asked of Sphinx once the whole site is read."""

    def __init__(self, app: Sphinx, docname: str) -> None:
        self.app, self.env, self.docname = app, app.env, docname
        self.source = Path(app.env.doc2path(docname))
        language = app.config.language or "en"
        self.catalogue: dict[str, str] | None = None
        if language != "en":
            for locale_dir in app.config.locale_dirs:
                path = Path(app.srcdir, locale_dir, language, "LC_MESSAGES", f"{docname}.po")
                if path.exists():
                    self.catalogue = translated_entries(path)
                    break
            else:
                raise FileNotFoundError(f"{docname}: no {language} catalogue")

    def translate(self, text: str) -> str:
        if self.catalogue is None:
            return text
        return translate_markdown(text, self.catalogue, where=self.docname)

    def reference(self, role: str, target: str, title: str | None) -> str:
        if role == "term":
            return title or target
        domain, kind = _XREFS[role]
        if role in _LOWERCASE:
            target = target.lower()
        shown = title or target
        contnode = nodes.inline(shown, shown)
        node = addnodes.pending_xref("", contnode, refdomain=domain, reftype=kind,
                                     reftarget=target, refdoc=self.docname,
                                     refexplicit=title is not None, refwarn=True)
        resolved = self.env.get_domain(domain).resolve_xref(
            self.env, self.docname, self.app.builder, kind, target, node, contnode)
        if resolved is None:     # as Sphinx does: a warning, and the role's own text
            logger.warning(f"{{{role}}}`{target}` does not resolve in the notebook of the page",
                           location=self.docname, type="chapter_downloads")
            return shown
        return resolved.astext()

    def image(self, path: str) -> Path:
        english = (self.source.parent / path).resolve()
        self.env.temp_data["docname"] = self.docname     # as while the page is read
        try:
            translated = Path(get_image_filename_for_language(str(english), self.env))
        finally:
            self.env.temp_data.pop("docname", None)
        return translated if translated.exists() else english

    def include(self, path: str, options: dict[str, str]) -> str:
        filename = (self.source.parent / path).resolve()
        text, _ = LiteralIncludeReader(str(filename), dict(options), self.app.config).read()
        return text


def write_downloads(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":   # the site's, not the PDF's
        return
    outdir = Path(app.outdir)
    build_wheel(outdir)
    language = app.config.language or "en"
    for docname in sorted(app.env.found_docs):
        source = chapter_source(app, docname)
        if source is None:
            continue
        notebook = plain_notebook(source, SphinxResolver(app, docname), language,
                                  where=docname)
        target = outdir / f"{docname}.ipynb"
        target.parent.mkdir(parents=True, exist_ok=True)
        nbformat.write(notebook, target)


def header_buttons(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree) -> None:
    if pagename in app.env.found_docs and chapter_source(app, pagename) is not None:
        add_download(context, pagename, ".ipynb",
                     str(words("Download this chapter as a Jupyter notebook")),
                     "fas fa-code", "download-notebook-button")


class CoursePackage(SphinxRole):
    """``{course-package}`text```: a link to the course's wheel at the root of the site."""

    def run(self) -> tuple[list[nodes.Node], list[nodes.system_message]]:
        here = posixpath.dirname(self.env.docname)
        link = posixpath.relpath(wheel_name(), here or ".")
        return [nodes.reference(self.rawtext, self.text, refuri=link)], []


def setup(app: Sphinx) -> dict:
    app.add_role("course-package", CoursePackage())
    # sphinx-book-theme adds its buttons at priority 501; this runs after it.
    app.connect("html-page-context", header_buttons, priority=502)
    app.connect("build-finished", write_downloads)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
