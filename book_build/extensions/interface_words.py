"""Sphinx extension: the site's interface in the page's language, from the course's catalogues.

Every word of the interface -- the theme's buttons and tooltips, the course's own controls,
the site's title and author line, myst-nb's "Show code cell source" -- is written in English
and looked up in the build's language, in one of two gettext catalogues of the course:

* ``locales/<language>/LC_MESSAGES/sphinx.po``, the catalogue of Sphinx's own domain: Sphinx
  reads a project's catalogue of that domain before its own and before pydata-sphinx-theme's
  (which registers its templates' words in the same domain), so it completes what they lack
  ("Color mode", "Search this book…") and corrects what they word otherwise. The course's
  templates (``templates/``) and extensions use the same domain, through :func:`words`.
* ``locales/<language>/LC_MESSAGES/booktheme.po``, sphinx-book-theme's domain: put before the
  theme's own catalogue here (:func:`course_catalogues_first`), whose ``zh_CN`` wording is
  Taiwan's (列印成 PDF, where zh_CN says 打印为 PDF).

The templates that write English without asking gettext (sphinx-book-theme's sidebar
toggles) have a copy in ``templates/`` that asks; myst-nb's prompts of folded cells
(``nb_code_prompt_show``: "Show code cell {type}", ``{type}`` filled in English) are
replaced whole in the page (:data:`CELL_PROMPTS`); the site's title and author come from
``_config.yml`` through the same catalogue (:func:`translated_settings`). A word a catalogue
lacks stays English, which the Chinese site's test of English left over reports.
"""

from __future__ import annotations

import gettext
import io
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from sphinx import locale
from sphinx.application import Sphinx
from sphinx.locale import get_translation

from autograder.course.catalogues import translated_entries

words = get_translation("sphinx")
"""``words("Color mode")``: the English words in the build's language (Sphinx's domain)."""

THEME_DOMAINS = ("booktheme",)
"""Catalogue domains of the theme that the course's catalogues of the same name come before."""

CELL_PROMPTS = [f"{verb} code cell {kind}" for verb in ("Show", "Hide")
                for kind in ("content", "source", "output", "outputs")]
"""myst-nb's labels of a folded cell (its ``nb_code_prompt_show`` and ``_hide`` defaults,
``{type}`` filled in), each looked up whole in the course's catalogue."""


def catalogue_path(srcdir: Path | str, locale_dirs: list[str], language: str,
                   domain: str) -> Path | None:
    """The course's catalogue of ``domain`` in ``language``, if it has one."""
    for folder in locale_dirs:
        path = Path(srcdir, folder, language, "LC_MESSAGES", f"{domain}.po")
        if path.is_file():
            return path
    return None


def translated_settings(srcdir: Path, locale_dirs: list[str], language: str,
                        settings: dict[str, str]) -> dict[str, str]:
    """``settings`` (``{"html_title": "Attention in NLP", ...}``) with each value translated
    by the course's ``sphinx.po`` in ``language`` (kept where it has no translation)."""
    path = catalogue_path(srcdir, locale_dirs, language, "sphinx")
    translations = translated_entries(path) if path else {}
    return {name: translations.get(value, value) for name, value in settings.items()}


def course_catalogues_first(app: Sphinx) -> None:
    """Put the course's catalogue of each theme domain before the theme's own."""
    language = app.config.language or "en"
    for domain in THEME_DOMAINS:
        path = catalogue_path(app.srcdir, app.config.locale_dirs, language, domain)
        if path is None:
            continue
        compiled = io.BytesIO()
        with path.open("rb") as handle:
            write_mo(compiled, read_po(handle))
        compiled.seek(0)
        ours = gettext.GNUTranslations(compiled)
        theirs = locale.translators.get(("general", domain))
        if theirs is not None:
            ours.add_fallback(theirs)
        locale.translators[("general", domain)] = ours


def translate_cell_prompts(app: Sphinx, pagename: str, templatename: str, context: dict,
                           doctree) -> None:
    body = context.get("body")
    if not body:
        return
    for prompt in CELL_PROMPTS:
        translated = str(words(prompt))
        if translated != prompt:
            body = body.replace(f">{prompt}<", f">{translated}<")
    context["body"] = body


def title_and_author(app: Sphinx, config) -> None:
    """The site's title, its name in the browser's tab, the footer's author line and the
    search field's placeholder (a theme option) in the build's language."""
    language = config.language or "en"
    if language == "en":
        return
    options = dict(config.html_theme_options or {})
    names = {"html_title": config.html_title, "project": config.project,
             "author": config.author, "search_bar_text": options.get("search_bar_text")}
    translated = translated_settings(Path(app.srcdir), config.locale_dirs, language,
                                     {name: value for name, value in names.items() if value})
    if "search_bar_text" in translated:
        options["search_bar_text"] = translated.pop("search_bar_text")
        config.html_theme_options = options
    for name, value in translated.items():
        setattr(config, name, value)


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", title_and_author)
    app.connect("builder-inited", course_catalogues_first)
    app.connect("html-page-context", translate_cell_prompts)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
