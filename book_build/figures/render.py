"""MyST-NB plugin: a localised build of the book shows each figure in the page's language.

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
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar

from docutils import nodes
from myst_nb.core.render import MimeData, NbElementRenderer

from autograder.course.languages import ENGLISH

from . import resolution
from .translation import METADATA_KEY, untranslated

__all__ = ["TranslatedFigures", "page_language"]

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
