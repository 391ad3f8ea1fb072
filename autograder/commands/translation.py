"""A released notebook in another language: its markdown translated from a gettext catalogue
(``release``'s translator, see :mod:`autograder.course.languages` for the names).

The catalogues are the ones the book's pages are translated with: Sphinx extracts every
paragraph, heading, list item's paragraph and table cell of a notebook's markdown as one
message whose ``msgid`` is the block's markdown source with its newlines made spaces. This
module parses each markdown cell as MyST does (markdown-it-py, with the book's MyST
extensions), finds those blocks by the lines they span (tokens' ``map``) and puts each
block's translation in their place; a table row is rewritten cell by cell.

A block with letters (outside math and inline code) whose ``msgid`` has no translation is
an error naming the cell and the block: a changed English exercise cannot ship a half
translated one. Blocks without letters (numbers, math only, code), math blocks and code
fences pass through unchanged. Nothing but markdown sources changes, except the nbgrader
checksum of each translated locked cell, recomputed with nbgrader's own function.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache

from nbformat import NotebookNode

from ..course.languages import METADATA_KEY

# The MyST extensions of the book (_config.yml's parse.myst_enable_extensions).
MYST_EXTENSIONS = ("amsmath", "colon_fence", "deflist", "dollarmath", "substitution")

_MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
_CODE = re.compile(r"`+[^`]*`+")
_PIPE = re.compile(r"(?<!\\)\|")


class MissingTranslation(ValueError):
    """A block of a notebook's markdown has no translation in the catalogue."""


def has_letters(text: str) -> bool:
    """Whether ``text`` has letters outside its math and inline code (words to translate)."""
    return any(ch.isalpha() for ch in _CODE.sub("", _MATH.sub("", text)))


@lru_cache(maxsize=1)
def _parser():
    from markdown_it.renderer import RendererHTML
    from myst_parser.config.main import MdParserConfig
    from myst_parser.parsers.mdit import create_md_parser

    return create_md_parser(MdParserConfig(enable_extensions=set(MYST_EXTENSIONS)),
                            RendererHTML)


def message_id(content: str) -> str:
    """The ``msgid`` Sphinx gives a block: its source, newlines made spaces, stripped."""
    return content.replace("\n", " ").strip()


def _translate(content: str, catalogue: dict[str, str], where: str) -> str:
    msgid = message_id(content)
    if msgid in catalogue:
        return catalogue[msgid]
    if not has_letters(msgid):
        return msgid
    raise MissingTranslation(f"{where}: no translation of {msgid!r}")


def _split_row(line: str) -> tuple[str, list[str], str]:
    """(leading pipe, cells, trailing pipe) of a table row, split as markdown-it splits it
    (on pipes not escaped with a backslash)."""
    text = line.strip()
    lead = "|" if text.startswith("|") else ""
    trail = "|" if len(text) > 1 and text.endswith("|") and not text.endswith("\\|") else ""
    inner = text[len(lead):len(text) - len(trail)]
    return lead, _PIPE.split(inner), trail


def translate_markdown(source: str, catalogue: dict[str, str], where: str = "markdown") -> str:
    """``source`` with every paragraph, heading, list item's paragraph and table cell
    replaced by its translation in ``catalogue`` (see the module's docstring).

    Raises :class:`MissingTranslation` naming ``where`` and the block.
    """
    lines = source.split("\n")
    tokens = _parser().parse(source)
    edits: list[tuple[int, int, list[str]]] = []    # (first line, end line, new lines)
    index = 0
    while index < len(tokens):
        token = tokens[index]
        if token.type == "tr_open":
            cells = []
            index += 1
            while tokens[index].type != "tr_close":
                if tokens[index].type == "inline":
                    cells.append(tokens[index].content)
                index += 1
            row = token.map[0]
            lead, parts, trail = _split_row(lines[row])
            if [p.strip() for p in parts] != [c.strip() for c in cells]:
                raise MissingTranslation(f"{where}: cannot split the table row {lines[row]!r}")
            new = [f" {_translate(p, catalogue, where)} " if p.strip() else p for p in parts]
            indent = lines[row][:len(lines[row]) - len(lines[row].lstrip())]
            edits.append((row, row + 1, [indent + lead + "|".join(new) + trail]))
        elif token.type in ("paragraph_open", "heading_open"):
            inline = tokens[index + 1]
            first, end = token.map
            content_lines = inline.content.split("\n")
            first_text = content_lines[0]
            column = lines[first].find(first_text) if first_text else -1
            if column < 0:
                raise MissingTranslation(f"{where}: cannot find the block {inline.content!r}")
            prefix = lines[first][:column]
            translation = _translate(inline.content, catalogue, where)
            if translation != message_id(inline.content):
                # the block's lines; a setext heading keeps its underline after them
                edits.append((first, first + len(content_lines), [prefix + translation]))
            index += 1
        index += 1
    for first, end, new in sorted(edits, reverse=True):
        lines[first:end] = new
    return "\n".join(lines)


def translate_notebook(notebook: NotebookNode, catalogue: dict[str, str], language: str,
                       name: str = "notebook") -> NotebookNode:
    """A copy of ``notebook`` whose markdown cells are translated from ``catalogue`` and
    whose metadata says ``language``; every other byte of every cell is the same, but the
    nbgrader checksum of a translated cell, recomputed with nbgrader's function."""
    from nbgrader.utils import compute_checksum

    translated = copy.deepcopy(notebook)
    translated.metadata[METADATA_KEY] = {"language": language}
    for position, cell in enumerate(translated.cells):
        if cell.cell_type != "markdown":
            continue
        where = f"{name}, cell {cell.get('id') or position}"
        source = translate_markdown(cell.source, catalogue, where)
        if source == cell.source:
            continue
        cell.source = source
        nbgrader = cell.metadata.get("nbgrader", {})
        if "checksum" in nbgrader:
            nbgrader["checksum"] = compute_checksum(cell)
    return translated
