"""Sphinx extension: one site in two languages, from the same sources.

The English site is built at the root of ``_build/html``; the Chinese one, from the same
pages and the same executed outputs, with Sphinx's gettext catalogues in ``locales/``
(``language = "zh_CN"``), under ``_build/html/zh/`` (:mod:`book_build.translate`).
This extension gives both what they need:

* **A language switch on every page** (in the article header, before the download
  buttons): a plain link to the same page in the other language, and a
  ``<link rel="alternate" hreflang>`` in the page's head, so that search engines and
  readers find it too. The sites are laid out by the course's table of languages
  (:data:`autograder.course.languages.LANGUAGES`): a page ``book/x`` is ``book/x.html`` in
  English and ``zh/book/x.html`` in Chinese.
* **Outputs are shared, their alt text is not.** What a notebook printed or displayed is
  computed once and shown as it is in every language (the numbers and the code's words
  are the same); the front matter is not shown at all. Neither is offered for translation.
  The alt text of an output's figure, written in the cell's metadata, is.
* **No page published half translated.** In a translated build, every paragraph, heading
  and caption that Sphinx looks up in a page's catalogue must be found there (a new or
  changed English sentence, or a catalogue entry still marked fuzzy, is missing): the
  build stops at its end with the list of missing messages, page by page, and the line of
  each.
"""

from __future__ import annotations

from pathlib import Path

from docutils import nodes
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ExtensionError
from sphinx.locale import init as init_locale
from sphinx.transforms import SphinxTransform
from sphinx.util.i18n import docname_to_domain
from sphinx.util.nodes import NodeMatcher

from autograder.course.languages import ENGLISH, LANGUAGES, Language, language

from .figure_alt import ancestors, is_cell_output

TEMPLATES = Path(__file__).parent / "templates"


def language_of(config: Config) -> Language:
    """The build's language (English if none is set)."""
    return language(config.language)


def page_url(pagename: str, here: Language, there: Language) -> str:
    """The relative URL of ``pagename`` in the site of ``there`` from the same page in the
    site of ``here``: up to the page's own site root, up to the English root if that site
    is in a folder, then down into the other site's folder."""
    up = "../" * pagename.count("/")
    if here.site_folder:
        up += "../" * (here.site_folder.count("/") + 1)
    down = f"{there.site_folder}/" if there.site_folder else ""
    return f"{up}{down}{pagename}.html"


def add_switch_template(app: Sphinx, config: Config) -> None:
    """Put the switch in the article header, before sphinx-book-theme's buttons."""
    if str(TEMPLATES) not in map(str, config.templates_path):
        config.templates_path = [str(TEMPLATES), *config.templates_path]
    options = dict(config.html_theme_options or {})
    header_end = options.get("article_header_end", ["article-header-buttons.html"])
    if isinstance(header_end, str):
        header_end = [item.strip() for item in header_end.split(",") if item.strip()]
    if "language-switch.html" not in header_end:
        options["article_header_end"] = ["language-switch.html", *header_end]
    config.html_theme_options = options


def switch_context(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree) -> None:
    here = language_of(app.config)
    context["course_language_switch"] = [
        {"url": page_url(pagename, here, there), "name": there.name, "hreflang": there.tag,
         "title": there.read_this_page}
        for there in LANGUAGES if there != here]
    alternates = "".join(
        f'<link rel="alternate" hreflang="{there.tag}" '
        f'href="{page_url(pagename, here, there)}" />\n'
        for there in LANGUAGES)
    context["metatags"] = context.get("metatags", "") + alternates


class KeepOutputsShared(SphinxTransform):
    """Take outputs' text and the front matter out of translation (figures' alt text and
    captions stay: a cell's ``mystnb: figure: caption:`` puts the caption among its outputs).

    Runs before Sphinx's ``Locale`` transform (priority 20) and the gettext builder's
    extraction, so neither catalogues nor translated pages see these nodes.
    """

    default_priority = 15

    def apply(self, **kwargs) -> None:
        shared = [*self.document.findall(is_cell_output),
                  *(child for child in self.document.children
                    if isinstance(child, nodes.field_list))]
        for root in shared:
            for element in root.findall(nodes.TextElement):
                if not any(isinstance(n, nodes.caption) for n in (element, *ancestors(element))):
                    element["translatable"] = False


class FinishTranslation(SphinxTransform):
    """Translate the parts' captions; record every message the catalogue does not translate.

    Runs after Sphinx's ``Locale`` transform (priority 20), which marks each translatable
    node ``translated = False`` when the catalogue has no translation for it (fuzzy
    entries are left out of the compiled catalogue, so they count as missing), and after
    sphinx-external-toc puts ``_toc.yml``'s toctrees into the root page (priority 100), too
    late for ``Locale``: their captions (the parts' names) are translated here, from the
    root page's catalogue, where Sphinx's gettext builder puts them.
    """

    default_priority = 110

    def apply(self, **kwargs) -> None:
        if language_of(self.config).code == ENGLISH or self.app.builder.name == "gettext":
            return
        docname = self.env.docname
        missing = self.env.course_untranslated  # type: ignore[attr-defined]
        domain = docname_to_domain(docname, self.config.gettext_compact)
        dirs = [str(Path(self.env.srcdir) / d) for d in self.config.locale_dirs]
        catalogue, has_catalogue = init_locale(dirs, self.config.language, domain)
        if not has_catalogue:
            missing[docname] = [(0, f"no catalogue {domain}.po for this page")]
            return
        messages = getattr(catalogue, "_catalog", {})
        translations = set(messages.values())
        found = []
        for toctree in self.document.findall(addnodes.toctree):
            caption = toctree.get("caption")
            if caption and messages.get(caption):
                toctree["caption"] = messages[caption]
            elif caption and caption not in translations:
                found.append((toctree.line or 0, f"(part) {caption}"))
        found += [(node.line or 0, message_of(node))
                 for node in NodeMatcher(nodes.Element, translated=False)
                 .findall(self.document)
                 if not in_translated_text(node)
                 # Sphinx marks an image untranslated even when it translated its alt text.
                 and not (isinstance(node, nodes.image) and node.get("alt") in translations)]
        if found:
            missing[docname] = found


def message_of(node: nodes.Element) -> str:
    if isinstance(node, nodes.image):
        return f"(alt text) {node.get('alt', '')}"
    return node.rawsource.replace("\n", " ").strip() or node.astext()


def in_translated_text(node: nodes.Element) -> bool:
    """An image inside a translated paragraph: its alt text came with the translation."""
    return any(parent.get("translated") for parent in ancestors(node))


def init_missing(app: Sphinx, env, docnames) -> None:
    """The pages' missing messages, kept with the environment (a page read again was
    forgotten first: ``env-purge-doc``)."""
    if not hasattr(env, "course_untranslated"):
        env.course_untranslated = {}


def forget_page(app: Sphinx, env, docname: str) -> None:
    getattr(env, "course_untranslated", {}).pop(docname, None)


def merge_missing(app: Sphinx, env, docnames, other) -> None:
    env.course_untranslated.update(getattr(other, "course_untranslated", {}))


def stop_if_untranslated(app: Sphinx, env) -> None:
    """Fail the build, naming every message without its translation."""
    missing = {docname: found for docname, found in
               getattr(env, "course_untranslated", {}).items() if docname in env.found_docs}
    if not missing:
        return
    lines = []
    for docname in sorted(missing):
        for line, message in missing[docname]:
            shown = message if len(message) <= 100 else message[:97] + "..."
            lines.append(f"  {env.doc2path(docname, False)}:{line}: {shown}")
    raise ExtensionError(
        f"{len(lines)} message(s) have no {env.config.language} translation (add them to "
        "the catalogues in locales/: see README, 'Translating'):\n" + "\n".join(lines))


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", add_switch_template)
    app.connect("html-page-context", switch_context)
    app.add_transform(KeepOutputsShared)
    app.add_transform(FinishTranslation)
    app.connect("env-before-read-docs", init_missing)
    app.connect("env-purge-doc", forget_page)
    app.connect("env-merge-info", merge_missing)
    app.connect("env-check-consistency", stop_if_untranslated)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
