"""Sphinx extension: pages that load without console errors.

With Jupyter Book 1's set of extensions, sphinx-thebe and sphinx-togglebutton register their
inline scripts while the environment is read, so each reaches a page twice; the second
``const THEBE_JS_URL = ...`` is a JavaScript error (``Identifier 'THEBE_JS_URL' has already
been declared``). This extension keeps the first copy of every script on a page (the copies
differ only in their file name: None in one, '' in the other).
(The other console error of a plain build, pydata-sphinx-theme's ``Got invalid theme mode``,
is avoided by ``html_context: {default_mode: light}`` in ``_config.yml``.)

It also gives a page whose title is the site's own (the front page) that title once in the
browser's tab: Sphinx would write ``Attention in NLP — Attention in NLP``; and every page one
search box: the sidebar's (on a phone, the article header's button). pydata-sphinx-theme's
default ``navbar_persistent`` adds a second one in a header bar of its own above each page.
"""

from __future__ import annotations

from markupsafe import Markup
from sphinx.application import Sphinx
from sphinx.config import Config


def striptags(html: str) -> str:
    return Markup(html).striptags()


def drop_duplicate_scripts(app: Sphinx, pagename: str, templatename: str, context: dict,
                           doctree) -> None:
    scripts = context.get("script_files")
    if not scripts:
        return
    seen, unique = set(), []
    for script in scripts:
        # An inline script comes once with the file name None and once with ''.
        key = (script.filename or "", tuple(sorted(script.attributes.items())))
        if key not in seen:
            seen.add(key)
            unique.append(script)
    context["script_files"] = unique


def one_title_on_the_front_page(app: Sphinx, pagename: str, templatename: str,
                                context: dict, doctree) -> None:
    """Sphinx's template adds `` — <docstitle>`` to every page's title unless ``docstitle``
    is empty: empty it on the page titled as the site, and give the theme's logo the same
    text it showed from ``docstitle``."""
    docstitle = context.get("docstitle") or ""
    title = striptags(context.get("title") or "").strip()
    if title and title == striptags(docstitle).strip():
        logo = context.get("theme_logo") or {}
        context["theme_logo"] = {**logo, "text": logo.get("text") or docstitle}
        context["docstitle"] = ""


def one_search_box(app: Sphinx, config: Config) -> None:
    """No search button in the header bar (Jupyter Book sets the theme's options itself, so
    ``_config.yml`` cannot add one without replacing them all)."""
    options = dict(config.html_theme_options or {})
    options.setdefault("navbar_persistent", [])
    config.html_theme_options = options


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", one_search_box)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", one_title_on_the_front_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
