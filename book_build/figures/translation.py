"""Figures in the page's language: every figure is rendered once per translation as well.

The book is built in English and, from the same executed notebooks, in other languages
(Sphinx i18n, ``locales/<language>/LC_MESSAGES/``). A page's code draws its figures with
English words: titles, axis labels, legends, texts. While the book's notebooks execute,
this IPython extension makes the inline backend render every figure as usual -- the PNG
that Jupyter and the English site show, unchanged -- and then once more per language that
has a catalogue ``locales/<language>/LC_MESSAGES/figures.po``, with each English string
replaced by its translation (the figure is put back as it was afterwards). The
translations travel in the output's metadata for ``image/png``::

    {"attention_course/figure-translations": {
        "zh_CN": {"image/png": "<base64 PNG>", "version": 2,
                  "texts": [["title", "Keys", "键"], ["tick", "the", null], ...]}}}

``texts`` lists each string of the figure that has a word in it, with its role and its
translation (``null``: none in the catalogue). So the cache holds every language's figure
from one execution, the localised build only picks the right rendering
(:mod:`book_build.figures.render`), and the strings to translate are read from the cache
(:mod:`book_build.figure_strings`).

Which strings must be translated (:func:`needs_translation`): every title, axis label,
legend entry and text drawn on a figure that has a word in it (two letters or more outside
``$...$`` math; ``nan`` is a number). A tick label is data -- a token of an example
sentence -- and stays as it is unless it mixes a word with a number (``head 3``,
``layer 2``, ``Node 1``: a label the code makes); a tick label that is a word of the code
(``soft``, ``baseline``) is translated when the catalogue has it. Data that a title or a
text shows (German number words, the example's tokens, proper names) get an entry whose
translation is the string itself: every string with a word is a translator's decision.
Strings that differ only in their numbers (``layer 1, head 2``, a score the page computed)
share one entry, their template ``layer %1, head %2`` (:func:`translate`).

The book's build loads the extension into its kernels (:mod:`book_build.execute`);
students' notebooks never load it, and the pages' code does not change.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable, Iterator, Mapping
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import matplotlib as mpl
from matplotlib.figure import Figure
from matplotlib.text import Text
from matplotlib.ticker import Formatter

from autograder.course.catalogues import translated_entries

from ..paths import LOCALES

__all__ = ["CATALOGUE", "DATA_ROLES", "LOCALES_VARIABLE", "METADATA_KEY", "VERSION",
           "figure_texts", "is_current",
           "load_catalogues", "load_ipython_extension", "needs_translation",
           "render_translations", "template", "translate", "untranslated"]

METADATA_KEY = "attention_course/figure-translations"
"""Key of the translated renderings in an ``image/png`` output's metadata."""

VERSION = 2
"""How translations are rendered; a rendering of another version is out of date."""

LOCALES_VARIABLE = "ATTENTION_COURSE_LOCALES"
"""Environment variable naming the folder of ``<language>/LC_MESSAGES/figures.po``
(default: the repository's ``locales/``)."""

CATALOGUE = "figures.po"

TICK = "tick"
DATA_ROLES = frozenset({TICK, "menu option"})
"""Roles of strings that are data unless they mix a word with a number: tick labels, and
the examples' names in an interactive view's menu (:func:`attention_course.attention_view.
translate_view`)."""

Translations = Mapping[str, str]
"""English string -> its translation, for one language."""

_MATH = re.compile(r"(?<!\\)\$.*?(?<!\\)\$", re.S)
_WORD = re.compile(r"[A-Za-z]{2,}")
_NOT_WORDS = {"nan", "inf"}  # printed numbers
_NUMBER = re.compile(r"\d+(?:\.\d+)?")
_PLACEHOLDER = re.compile(r"%(\d+)")


def has_words(text: str) -> bool:
    """Whether ``text`` holds a word (two ASCII letters or more, not ``nan``) outside
    ``$...$`` math."""
    return any(word not in _NOT_WORDS for word in _WORD.findall(_MATH.sub("", text)))


def template(text: str) -> str:
    """``text`` with its numbers numbered as placeholders: ``"layer 2, head 10"`` ->
    ``"layer %1, head %2"``. A catalogue entry may translate the template of strings that
    differ in their numbers only (numbers computed by the page, or counted in a loop)."""
    count = iter(range(1, 1000))
    return _NUMBER.sub(lambda match: f"%{next(count)}", text)


def translate(text: str, translations: Translations) -> str | None:
    """The translation of ``text``: its own entry, else its template's with the numbers put
    back (a translation may reorder ``%1``, ``%2``, ...), else None."""
    if text in translations:
        return translations[text]
    numbers = _NUMBER.findall(text)
    translation = translations.get(template(text)) if numbers else None
    if translation is None:
        return None
    return _PLACEHOLDER.sub(lambda match: numbers[int(match.group(1)) - 1], translation)


def needs_translation(role: str, text: str) -> bool:
    """Whether a figure string must have a translation: any text with a word in it, but a
    tick label only if it also has a number (see the module's docstring)."""
    return has_words(text) and (role not in DATA_ROLES or _NUMBER.search(text) is not None)


def default_locales() -> Path:
    """The folder of the catalogues: ``$ATTENTION_COURSE_LOCALES``, else the repository's."""
    folder = os.environ.get(LOCALES_VARIABLE)
    return Path(folder) if folder else LOCALES


def load_catalogues(locales: Path | None = None) -> dict[str, dict[str, str]]:
    """The translated entries of every ``<language>/LC_MESSAGES/figures.po`` of ``locales``.

    Returns:
        language (e.g. ``"zh_CN"``) -> {English string: translation}; entries that are
        untranslated or fuzzy are left out.
    """
    locales = default_locales() if locales is None else locales
    return {path.parent.parent.name: translated_entries(path)
            for path in sorted(locales.glob(f"*/LC_MESSAGES/{CATALOGUE}"))}


def figure_texts(fig: Figure) -> list[tuple[str, Text]]:
    """Every text artist of ``fig`` but its tick labels and offsets, with its role.

    Returns:
        ``(role, text)`` pairs, role one of ``"title"``, ``"suptitle"``, ``"axis label"``,
        ``"legend"``, ``"text"`` (annotations, texts placed on axes or figure, ...).
    """
    skipped: set[int] = set()
    roles: dict[int, str] = {}
    for ax in fig.axes:
        for axis in ax._axis_map.values():
            skipped.add(id(axis.offsetText))
            for tick in [*axis.majorTicks, *axis.minorTicks]:
                skipped.update((id(tick.label1), id(tick.label2)))
            roles[id(axis.label)] = "axis label"
        for title in (ax.title, ax._left_title, ax._right_title):
            roles[id(title)] = "title"
        legend = ax.get_legend()
        if legend is not None:
            for text in [*legend.get_texts(), legend.get_title()]:
                roles[id(text)] = "legend"
    for legend in fig.legends:
        for text in [*legend.get_texts(), legend.get_title()]:
            roles[id(text)] = "legend"
    if fig._suptitle is not None:
        roles[id(fig._suptitle)] = "suptitle"
    found = []
    for artist in fig.findobj(Text):
        if id(artist) not in skipped and artist.get_text():
            found.append((roles.get(id(artist), "text"), artist))
    return found


class _TranslatingFormatter(Formatter):
    """A tick formatter that translates what another one writes, and records it."""

    def __init__(self, inner: Formatter, translate: Callable[[str, str], str]) -> None:
        self.inner = inner
        self.translate = translate
        self.axis = inner.axis

    def __call__(self, x: float, pos: int | None = None) -> str:
        return self.translate(TICK, self.inner(x, pos))

    def format_ticks(self, values: Any) -> list[str]:
        return [self.translate(TICK, label) for label in self.inner.format_ticks(values)]

    def set_locs(self, locs: Any) -> None:
        self.inner.set_locs(locs)

    def get_offset(self) -> str:
        return self.inner.get_offset()


@contextmanager
def translated(fig: Figure, translations: Translations,
               family: str | None) -> Iterator[list[list[Any]]]:
    """Within the block, ``fig`` shows the translations of its strings; afterwards it is
    exactly as before.

    Args:
        fig: The figure.
        translations: English string -> translation.
        family: A font family with the translations' glyphs, appended to every text's
            families as a fallback (None: fonts unchanged).

    Yields:
        The record of the strings the figure drew, filled while it is drawn (tick labels
        are formatted at drawing time): ``[role, English string, translation or None]``
        for each distinct string with a word in it.
    """
    record: list[list[Any]] = []
    seen: set[tuple[str, str]] = set()

    def record_translation(role: str, text: str) -> str:
        translation = translate(text, translations)
        if has_words(text) and (role, text) not in seen:
            seen.add((role, text))
            record.append([role, text, translation])
        return text if translation is None else translation

    texts = figure_texts(fig)
    every_text = fig.findobj(Text)
    saved_text = [(artist, artist.get_text()) for _, artist in texts]
    saved_font = [(artist, artist.get_fontproperties().copy()) for artist in every_text]
    axes = [axis for ax in fig.axes for axis in ax._axis_map.values()]
    saved_formatters = [(axis, axis.major.formatter, axis.minor.formatter) for axis in axes]
    with ExitStack() as stack:
        try:
            if family is not None:
                families = [*mpl.rcParams["font.family"], family]
                stack.enter_context(mpl.rc_context({"font.family": families}))
                for artist in every_text:
                    artist.set_fontfamily([*artist.get_fontproperties().get_family(), family])
            for role, artist in texts:
                text = record_translation(role, artist.get_text())
                artist.set_text(text)
                if family is not None and "$" in text and not text.isascii():
                    # Mathtext draws the words around formulas in the text's first family
                    # only, without falling back: the translation's font comes first.
                    families = artist.get_fontproperties().get_family()
                    artist.set_fontfamily([family, *(f for f in families if f != family)])
            for axis, major, minor in saved_formatters:
                axis.major.formatter = _TranslatingFormatter(major, record_translation)
                axis.minor.formatter = _TranslatingFormatter(minor, record_translation)
            yield record  # filled as the figure is drawn
        finally:
            for axis, major, minor in saved_formatters:
                axis.major.formatter, axis.minor.formatter = major, minor
            for artist, text in saved_text:
                artist.set_text(text)
            for artist, font in saved_font:
                artist.set_fontproperties(font)


def render_translations(fig: Figure, render: Callable[[Figure], str | None],
                        catalogues: Mapping[str, Translations],
                        family: str | None) -> dict[str, dict[str, Any]]:
    """Render ``fig`` once per language, with its strings translated.

    Args:
        fig: The figure, already rendered in English.
        render: Renders a figure as the display does (e.g. a base64 PNG).
        catalogues: language -> translations (:func:`load_catalogues`).
        family: Fallback font family for the translations' glyphs.

    Returns:
        language -> ``{"image/png": rendering, "texts": [[role, English, translation or
        None], ...]}``.
    """
    renderings = {}
    for language, translations in catalogues.items():
        with translated(fig, translations, family) as texts:
            image = render(fig)
        renderings[language] = {"image/png": image, "texts": texts, "version": VERSION}
    return renderings


def untranslated(rendering: Mapping[str, Any]) -> list[str]:
    """The strings of one language's rendering that needed a translation and had none."""
    return [text for role, text, translation in rendering["texts"]
            if translation is None and needs_translation(role, text)]


def is_current(metadata: Mapping[str, Any], catalogues: Mapping[str, Translations]) -> bool:
    """Whether an ``image/png`` output's metadata holds a rendering for every language of
    ``catalogues``, each made with the translations the catalogues give today."""
    if not catalogues:
        return True
    renderings = metadata.get(METADATA_KEY)
    if renderings is None:
        return False
    for language, translations in catalogues.items():
        rendering = renderings.get(language)
        if rendering is None or rendering.get("version") != VERSION:
            return False
        if any(translate(text, translations) != translation
               for _, text, translation in rendering["texts"]):
            return False
    return True


def load_ipython_extension(ipython: Any) -> None:
    """Give every PNG of a Matplotlib figure its translated renderings as metadata.

    IPython's inline backend registers ``IPython.core.pylabtools.print_figure`` as the PNG
    formatter of figures when Matplotlib is first imported; this replaces that function by
    one that returns ``(png, metadata)``, the English PNG unchanged. Loading the extension
    twice does nothing more.
    """
    from IPython.core import pylabtools

    if getattr(pylabtools.print_figure, "translates_figures", False):
        return
    original = pylabtools.print_figure
    catalogues = load_catalogues()
    family: list[str | None] = []  # found when a figure is first translated

    @functools.wraps(original)
    def print_figure(fig: Figure, fmt: str = "png", *args: Any, **kwargs: Any) -> Any:
        data = original(fig, fmt, *args, **kwargs)
        if fmt != "png" or data is None or not catalogues:
            return data
        if not family:
            from attention_course.fonts import cjk_family
            family.append(cjk_family())

        def render(figure: Figure) -> Any:
            return original(figure, fmt, *args, **kwargs)

        return data, {METADATA_KEY: render_translations(fig, render, catalogues, family[0])}

    print_figure.translates_figures = True  # type: ignore[attr-defined]
    pylabtools.print_figure = print_figure
    # if the inline backend is active already, register the new function in its place
    png = ipython.display_formatter.formatters["image/png"]
    if Figure in png.type_printers:
        png.for_type(Figure, functools.partial(print_figure, fmt="png", base64=True))
