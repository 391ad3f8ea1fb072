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

And it gives every control a name that assistive technologies can announce, and one that
contains the words the control shows (WCAG 2.0/2.1 A and AA, as axe-core checks them):

* each toggle of the sidebar's table of contents (pydata-sphinx-theme's ``<summary>``,
  an icon only) is named after the chapter it opens: "Pages in “1. Attention is …”";
* a folded code cell's toggle (myst-nb's ``<summary aria-label="Toggle hidden content">``)
  is named by the words it shows, "Show code cell source", instead of that label;
* the search button (``templates/search-button-field.html``) and the colour-mode button
  (``templates/theme-switcher.html``) are named by what they show, in the page's language
  (the words of the course's catalogues, :mod:`.interface_words`);
* the references' list (docutils' ``<div role="list">`` of ``role="doc-biblioentry"``,
  a role DPUB-ARIA 1.1 deprecates) is a list of ``role="listitem"``.
"""

from __future__ import annotations

import functools

from markupsafe import Markup
from sphinx.application import Sphinx
from sphinx.config import Config

from .interface_words import words
from .languages import TEMPLATES

# Markup of the page's body that names a control wrongly or uses a deprecated role, and its
# repair: (what the writer wrote, what the page gets).
BODY_FIXES = (
    # myst-nb (sphinx_.py, visit_HideCellInput): the label hid the words the toggle shows.
    ('<summary aria-label="Toggle hidden content">', "<summary>"),
    # docutils' HTML5 writer (visit_citation): doc-biblioentry is deprecated, and a list's
    # items must be listitems.
    ('role="doc-biblioentry"', 'role="listitem"'),
)


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


def course_templates(app: Sphinx, config: Config) -> None:
    """The course's templates come before the theme's (``templates/``); their words are
    looked up in the course's catalogues (:mod:`.interface_words`)."""
    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path = [str(TEMPLATES), *config.templates_path]


def name_the_toggles(generate, pages_in: str):
    """pydata-sphinx-theme's ``generate_toctree_html``, its ``<summary>`` toggles named
    after the chapter each opens (the theme gives them a chevron icon and no text)."""

    @functools.wraps(generate)
    def generate_named(*args, **kwargs):
        toctree = generate(*args, **kwargs)
        if hasattr(toctree, "select"):  # a BeautifulSoup (cached: named once)
            for summary in toctree.select("li.has-children > details > summary"):
                if summary.get("aria-label") or summary.get_text(strip=True):
                    continue
                link = summary.find_parent("li").find("a", recursive=False)
                if link is not None:
                    summary["aria-label"] = pages_in.format(title=link.get_text(" ", strip=True))
        return toctree

    return generate_named


def accessible_names(app: Sphinx, pagename: str, templatename: str, context: dict,
                     doctree) -> None:
    body = context.get("body")
    if body:
        for wrong, right in BODY_FIXES:
            body = body.replace(wrong, right)
        context["body"] = body
    generate = context.get("generate_toctree_html")
    if generate is not None:
        context["generate_toctree_html"] = name_the_toggles(generate,
                                                           str(words("Pages in “{title}”")))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", one_search_box)
    app.connect("config-inited", course_templates)
    # After pydata-sphinx-theme's add_toctree_functions (priority 500).
    app.connect("html-page-context", accessible_names, priority=900)
    app.connect("html-page-context", drop_duplicate_scripts, priority=900)
    app.connect("html-page-context", one_title_on_the_front_page)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
