"""MyST-NB plugins: a localised build of the book shows each figure, and each table the
code prints, in the page's language.

While the book's notebooks execute, every Matplotlib figure is also rendered with its
strings translated, into its output's metadata (:mod:`book_build.figures.translation`).
This plugin, registered in ``pyproject.toml`` under MyST-NB's entry-point group
``myst_nb.mime_renderers`` (MyST-NB asks every plugin of that group first, for every
output), makes a build whose Sphinx ``language`` has such a rendering write that one
instead of the English PNG; with ``language`` ``en`` (or any language without a figure
catalogue) it declines, and MyST-NB renders the image exactly as without it.

In a build in another language, a figure without its rendering in that language (a cache
executed without the extension, or before the language's catalogue existed), or one with a
string that needed a translation and had none, is a build warning (``mystnb.figure_i18n``):
the book's tests fail on any warning.

Tables and lines of text that the code displays as Markdown are translated the same way,
from the same catalogue, when the page is built (:mod:`book_build.figures.printed_text`):
:class:`TranslatedMarkdown` hands MyST-NB the translated Markdown to render; a string with
a word and no translation is the same warning.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, ClassVar

from docutils import nodes
from myst_nb.core.render import MimeData, NbElementRenderer

from autograder.course.languages import ENGLISH

from . import resolution
from .printed_text import translate_markdown
from .translation import (
    CATALOGUE,
    METADATA_KEY,
    load_catalogues,
    needs_translation,
    translate,
    untranslated,
)

__all__ = ["TranslatedFigures", "TranslatedMarkdown", "page_language"]

WARNING_TYPE = "figure_i18n"


def page_language(renderer: NbElementRenderer) -> str:
    """The language the document is built in (Sphinx's ``language``; ``en`` by default)."""
    settings = renderer.renderer.document.settings
    return getattr(settings, "language_code", None) or ENGLISH


class TranslatedFigures:
    """A :class:`myst_nb.core.render.MimeRenderPlugin` for ``image/png`` outputs."""

    mime_priority_overrides: ClassVar[list[tuple[str, str, int | None]]] = []

    @staticmethod
    def handle_mime(renderer: NbElementRenderer, data: MimeData,
                    inline: bool) -> list[nodes.Element] | None:
        """The image node of the figure rendered in the page's language, or None to let
        MyST-NB render ``data`` itself (English, or not a figure's PNG)."""
        language = page_language(renderer)
        if data.mime_type != "image/png" or language.split("_")[0] == ENGLISH:
            return None
        renderings: dict[str, Any] = data.output_metadata.get("image/png", {}).get(
            METADATA_KEY, {})
        rendering = renderings.get(language)
        where = f"cell {data.cell_index}, output {data.output_index}"
        if rendering is None:
            renderer.logger.warning(
                f"figure of {where} has no rendering in {language}: execute the notebooks "
                "with python -m book_build.execute", subtype=WARNING_TYPE, line=data.line)
            return None
        missing = untranslated(rendering)
        if missing:
            renderer.logger.warning(
                f"figure of {where} has strings without a {language} translation: "
                f"{missing} (locales/{language}/LC_MESSAGES/figures.po)",
                subtype=WARNING_TYPE, line=data.line)
        # shown at its own width (a translated text can make it narrower or wider)
        shown = dict(data.output_metadata.get("image/png", {}))
        if "width" in shown:
            shown["width"] = resolution.shown_width(rendering["image/png"])
        translated = dataclasses.replace(
            data, content=rendering["image/png"],
            output_metadata={**data.output_metadata, "image/png": shown})
        if inline:
            return renderer.render_image_inline(translated)
        return renderer.render_image(translated)


@functools.cache
def _catalogue(language: str) -> dict[str, str]:
    """The figures' catalogue of ``language`` (``$ATTENTION_COURSE_LOCALES`` or the
    repository's ``locales/``), read once per build process."""
    return load_catalogues().get(language, {})


class TranslatedMarkdown:
    """A :class:`myst_nb.core.render.MimeRenderPlugin` for ``text/markdown`` outputs."""

    mime_priority_overrides: ClassVar[list[tuple[str, str, int | None]]] = []

    @staticmethod
    def handle_mime(renderer: NbElementRenderer, data: MimeData,
                    inline: bool) -> list[nodes.Element] | None:
        """The nodes of the Markdown translated into the page's language, or None to let
        MyST-NB render ``data`` itself (English, or not Markdown)."""
        language = page_language(renderer)
        if data.mime_type != "text/markdown" or language.split("_")[0] == ENGLISH:
            return None
        translations = _catalogue(language)
        markdown, record = translate_markdown(data.string,
                                              lambda text: translate(text, translations))
        missing = [text for role, text, translation in record
                   if translation is None and needs_translation(role, text)]
        if missing:
            renderer.logger.warning(
                f"printed Markdown of cell {data.cell_index}, output {data.output_index} has "
                f"strings without a {language} translation: {missing} "
                f"(locales/{language}/LC_MESSAGES/{CATALOGUE}; python -m "
                "book_build.figure_strings)", subtype=WARNING_TYPE, line=data.line)
        translated = dataclasses.replace(data, content=markdown)
        if inline:
            return renderer.render_markdown_inline(translated)
        return renderer.render_markdown(translated)
