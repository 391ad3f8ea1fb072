"""Tables and sentences that a page's code prints as Markdown, in the page's language.

A page shows its results as a table its code computes and displays as Markdown
(``IPython.display.Markdown``): ``| model | mean accuracy | ... |`` and a row per model,
sometimes a sentence after it ("On the same splits, GAT is better 14 times, ..."). The
numbers are the page's; the words are English. Like a figure's strings, every cell and
every line of text with a word in it is an entry of the figures' catalogue
``locales/<language>/LC_MESSAGES/figures.po`` (one catalogue for everything code draws or
prints), found in the cache by :mod:`book_build.figure_strings`; strings that differ in
their numbers only share one entry, their template (``%1 of %2 seeds``). A localised build
translates the Markdown before MyST-NB renders it (:class:`book_build.figures.render.
TranslatedMarkdown`); the English build shows it as it was printed.

What is translated: each cell of a table row (the separator row ``| --- | ---: |`` is
kept) and each other non-empty line, whole (its leading Markdown -- ``-``, ``#``, ``>`` --
kept). Text in ``$...$`` math and in backticks is not a word to translate (``has_words``).
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["ROLE_CELL", "ROLE_LINE", "markdown_strings", "translate_markdown"]

ROLE_CELL = "table cell"
ROLE_LINE = "printed text"

_SEPARATOR_CELL = re.compile(r"^\s*:?-{3,}:?\s*$")
_CELL_SPLIT = re.compile(r"(?<!\\)\|")
_LEADING_MARKUP = re.compile(r"^(\s*(?:[-*+]\s+|\d+\.\s+|#{1,6}\s+|>\s*)?)(.*?)(\s*)$")

Record = list[tuple[str, str, str | None]]
"""(role, English string, its translation or None) for every string with a word in it."""


def _is_table_row(line: str) -> bool:
    return line.lstrip().startswith("|")


def _cells(line: str) -> list[str]:
    """The cells of a table row ``| a | b |``, as written (spaces around them kept)."""
    inner = line.strip()
    inner = inner[1:] if inner.startswith("|") else inner
    inner = inner[:-1] if inner.endswith("|") and not inner.endswith("\\|") else inner
    return _CELL_SPLIT.split(inner)


def translate_markdown(markdown: str, translate: Callable[[str], str | None]
                       ) -> tuple[str, Record]:
    """``markdown`` with each cell and line translated where ``translate`` knows it.

    Args:
        markdown: What the code displayed (``text/markdown``).
        translate: English string -> its translation, or None.

    Returns:
        The translated Markdown (an untranslated string is left as it is), and the record
        of every string seen, in order, once each.
    """
    record: Record = []
    seen: set[tuple[str, str]] = set()

    def one(role: str, text: str) -> str:
        translation = translate(text) if text else None
        if text and (role, text) not in seen:
            seen.add((role, text))
            record.append((role, text, translation))
        return text if translation is None else translation

    lines = []
    for line in markdown.split("\n"):
        if _is_table_row(line):
            cells = _cells(line)
            if all(_SEPARATOR_CELL.match(cell) for cell in cells):
                lines.append(line)
                continue
            shown = []
            for cell in cells:
                text = cell.strip()
                shown.append(f" {one(ROLE_CELL, text).replace('|', '｜')} " if text else cell)
            lines.append("|" + "|".join(shown) + "|")
        else:
            lead, text, trail = _LEADING_MARKUP.match(line).groups()
            lines.append(lead + one(ROLE_LINE, text) + trail if text else line)
    return "\n".join(lines), record


def markdown_strings(markdown: str) -> list[tuple[str, str]]:
    """The strings of ``markdown`` that :func:`translate_markdown` looks up, with their
    roles, in order."""
    return [(role, text) for role, text, _ in translate_markdown(markdown, lambda _: None)[1]]
