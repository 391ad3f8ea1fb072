"""book_build.extensions.languages: one site in two languages, from the same sources.

A switch and ``hreflang`` alternates on every page to the same page in the other language;
outputs shared, not offered for translation (their figures' alt text and captions are); and a
translated build that stops, naming page and line, on any message without its translation.
"""

from __future__ import annotations

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from book_build.translate import OUTPUT_IMAGES

from .conftest import notebook, png_output

EXTENSION = "book_build.extensions.languages"
PAGE = """Attention
=========

A weighted sum of values.

The weights sum to one.
"""
TRANSLATED = {"Attention": "注意力", "A weighted sum of values.": "值的加权求和。",
              "The weights sum to one.": "权重之和为一。"}
PAGES = {"index.rst": PAGE + "\n.. toctree::\n\n   book/other\n", "book/other.rst": PAGE}


def catalogues(translations: dict[str, str], fuzzy: frozenset = frozenset(),
               pages=("index", "book/other")) -> dict[str, bytes]:
    """The zh_CN catalogue of each page, as files of a project."""
    files = {}
    for page in pages:
        catalog = Catalog(locale="zh_CN")
        for source, translation in translations.items():
            catalog.add(source, translation, flags=["fuzzy"] if source in fuzzy else [])
        with __import__("io").BytesIO() as buffer:
            write_po(buffer, catalog)
            files[f"locales/zh_CN/LC_MESSAGES/{page}.po"] = buffer.getvalue()
    return files


def translated(build, translations, fuzzy=frozenset(), **settings):
    return build({**PAGES, **catalogues(translations, fuzzy)}, [EXTENSION], language="zh_CN",
                 locale_dirs=["locales"], gettext_compact=False, **settings)


def test_a_complete_catalogue_builds(build):
    built = translated(build, TRANSLATED)
    assert built.error is None, built.warnings
    assert "权重之和为一" in built.page("book/other")


@pytest.mark.parametrize("how", ["missing", "fuzzy"])
def test_a_missing_translation_stops_the_build_and_is_named(build, how):
    translations = dict(TRANSLATED)
    if how == "missing":
        del translations["The weights sum to one."]
    built = translated(build, translations,
                       fuzzy=frozenset({"The weights sum to one."} if how == "fuzzy" else ()))
    assert built.error is not None
    message = str(built.error)
    assert "2 message(s) have no zh_CN translation" in message, message
    assert "index.rst:6: The weights sum to one." in message, message
    assert "other.rst:6: The weights sum to one." in message, message


@pytest.mark.parametrize("language, alternates", [
    ("en", {"en": "../book/other.html", "zh-CN": "../zh/book/other.html"}),
    ("zh_CN", {"en": "../../book/other.html", "zh-CN": "../../zh/book/other.html"}),
])
def test_every_page_names_itself_in_every_language(build, language, alternates):
    if language == "en":
        built = build(PAGES, [EXTENSION])
    else:
        built = translated(build, TRANSLATED)
    assert built.error is None, built.warnings
    page = built.page("book/other")
    for tag, url in alternates.items():
        assert f'<link rel="alternate" hreflang="{tag}" href="{url}" />' in page


def test_the_switch_leads_to_the_page_in_the_other_language(build):
    built = build(PAGES, [EXTENSION], html_theme="sphinx_book_theme")
    assert built.error is None, built.warnings
    page = built.page("book/other")
    assert 'href="../zh/book/other.html"' in page and 'hreflang="zh-CN"' in page
    assert "中文" in page and "阅读本页的中文版" in page


def test_outputs_are_shared_and_their_figures_alt_text_and_caption_are_translated(build):
    outputs = [{"output_type": "stream", "name": "stdout", "text": "printed by the code"},
               png_output()]
    page = notebook("Scores", outputs, cell_metadata={
        "mystnb": {"image": {"alt": "Heatmap of the weights"},
                   "figure": {"caption": "The weights, *after* training.",
                              "name": "fig-weights"}}})
    built = build({"index.ipynb": page}, ["myst_nb", EXTENSION], builder="gettext",
                  nb_execution_mode="off", gettext_compact=False,
                  nb_mime_priority_overrides=OUTPUT_IMAGES)
    assert built.error is None, built.warnings
    template = (built.outdir / "index.pot").read_text()
    assert 'msgid "A sentence."' in template
    assert 'msgid "Heatmap of the weights"' in template
    # a figure's caption (the cell's metadata puts it among the outputs) is offered too
    assert 'msgid "The weights, *after* training."' in template
    assert "printed by the code" not in template
