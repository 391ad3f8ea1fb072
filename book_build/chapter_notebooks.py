"""A chapter as a plain Jupyter notebook, the one a student downloads and runs.

The chapters are MyST markdown notebooks (jupytext), which JupyterLab opens only with
jupytext, and whose markdown is full of Sphinx: roles (``{term}``, ``{doc}``, ``{eq}``,
``{numref}``, ``{cite:t}``), directives (``:::{dropdown}``, ``{figure}``,
``{literalinclude}``) and labelled equations. :func:`plain_notebook` turns a chapter into an
``.ipynb`` that reads as the page does in any Jupyter:

- every code cell as it is (the page's code, nothing added);
- each markdown cell translated into the site's language, block by block, from the page's
  catalogue (the translator of the exercises, :func:`translate_markdown`);
- a role replaced by the text the page shows for it (``{eq}`eq-score``` -> ``(2.1)``,
  ``{cite:t}`...``` -> ``Vaswani et al. [2017]``), found by a :class:`Resolver`;
- a labelled equation numbered as on the page (``\\tag{2.1}``);
- a drop-down as an HTML ``<details>`` block (folded, as on the page), a figure as its image,
  attached to the notebook, with its number and caption, an included source as a code block;
- after a code cell whose figure the page numbers and captions (``mystnb: figure:``), a
  markdown cell with that number and caption, so that "Fig. 2.3" in the text finds it.

A role or directive this module does not know is an error naming the page and the line:
nothing of Sphinx's syntax reaches a student's notebook unread.
"""

from __future__ import annotations

import base64
import mimetypes
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

import jupytext
import nbformat

ROLES = ("term", "doc", "ref", "numref", "eq", "cite:p", "cite:t")
DIRECTIVES = ("dropdown", "figure", "literalinclude")

_ROLE = re.compile(r"\{(?P<name>[a-z]+(?::[a-z]+)?)\}`(?P<content>[^`]+)`")
_EXPLICIT = re.compile(r"^(?P<title>.*?)\s*<(?P<target>[^<>]+)>$", re.S)
_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|:{3,})\{(?P<name>[a-z-]+)\}"
                        r"[ \t]*(?P<argument>.*?)\s*$")
_CODE_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?!\{)")
_OPTION = re.compile(r"^:(?P<key>[a-z-]+):[ \t]*(?P<value>.*?)\s*$")
_LABELLED_MATH_END = re.compile(r"^(?P<indent>[ \t]*)\$\$[ \t]*\((?P<label>[^)]+)\)\s*$")


class Resolver(Protocol):
    """What the page shows for a reference, in the site's language (see the extension
    :mod:`book_build.extensions.chapter_downloads`, which asks Sphinx)."""

    def translate(self, text: str) -> str:
        """A markdown text (a cell, a figure's caption, a drop-down's title) in the site's
        language."""

    def reference(self, role: str, target: str, title: str | None) -> str:
        """The text the page shows for ``{role}`title <target>``` (``title`` None when the
        role names its target only)."""

    def image(self, path: str) -> Path:
        """The image file a figure of the page shows, in the site's language."""

    def include(self, path: str, options: dict[str, str]) -> str:
        """The text a ``literalinclude`` of the page shows."""


class UnknownSyntax(ValueError):
    """A chapter uses a role or directive that the plain notebook cannot render."""


@dataclass
class _Converter:
    resolver: Resolver
    where: str
    attachments: dict[str, dict[str, str]] = field(default_factory=dict)

    # -- inline text -------------------------------------------------------------------
    def roles(self, text: str, line: int) -> str:
        def replace(match: re.Match) -> str:
            name, content = match["name"], match["content"]
            if name not in ROLES:
                raise UnknownSyntax(f"{self.where}, line {line}: the role {{{name}}} has no "
                                    "plain form (book_build/chapter_notebooks.py)")
            explicit = _EXPLICIT.match(content)
            title, target = (explicit["title"], explicit["target"]) if explicit \
                else (None, content)
            shown = self.resolver.reference(name, target.strip(), title)
            return f"*{shown}*" if name == "doc" else shown
        return _ROLE.sub(replace, text)

    def text(self, lines: list[str], first: int) -> list[str]:
        """Plain markdown lines (no directive): translated, roles resolved, labelled
        equations numbered."""
        if not any(line.strip() for line in lines):
            return lines
        translated = self.resolver.translate("\n".join(lines)).split("\n")
        out = []
        for line in translated:
            end = _LABELLED_MATH_END.match(line)
            if end:
                number = self.resolver.reference("eq", end["label"], None).strip("()")
                out += [f"{end['indent']}\\tag{{{number}}}", f"{end['indent']}$$"]
            else:
                out.append(line)
        return self.roles("\n".join(out), first).split("\n")

    # -- blocks ------------------------------------------------------------------------
    def markdown(self, source: str, first: int = 1) -> str:
        lines = source.split("\n")
        out: list[str] = []
        plain: list[str] = []
        plain_start = first
        index = 0

        def flush() -> None:
            out.extend(self.text(plain, plain_start))
            plain.clear()

        while index < len(lines):
            line = lines[index]
            directive = _DIRECTIVE.match(line)
            fence = _CODE_FENCE.match(line)
            if directive:
                flush()
                end = self._closing(lines, index, directive["indent"], directive["fence"])
                out.extend(self.directive(directive, lines[index + 1:end], first + index))
                index = end + 1
                plain_start = first + index
                continue
            if fence:
                flush()
                end = self._closing(lines, index, fence["indent"], fence["fence"])
                out.extend(lines[index:end + 1])     # code stays as it is
                index = end + 1
                plain_start = first + index
                continue
            plain.append(line)
            index += 1
        flush()
        return "\n".join(out)

    def _closing(self, lines: list[str], start: int, indent: str, fence: str) -> int:
        """The line that closes the fence opened at ``start`` (a directive's fences of the
        same kind nested in it counted; nothing inside a code fence is)."""
        depth = 0
        code = not _DIRECTIVE.match(lines[start])
        for index in range(start + 1, len(lines)):
            stripped = lines[index].strip()
            if set(stripped) == {fence[0]} and len(stripped) >= len(fence):
                if depth == 0:
                    return index
                depth -= 1
            elif not code:
                nested = _DIRECTIVE.match(lines[index])
                if nested and nested["fence"] == fence:
                    depth += 1
        raise UnknownSyntax(f"{self.where}, line {start + 1}: a fence that is never closed")

    def directive(self, match: re.Match, body: list[str], line: int) -> list[str]:
        name, indent = match["name"], match["indent"]
        if name not in DIRECTIVES:
            raise UnknownSyntax(f"{self.where}, line {line}: the directive {{{name}}} has no "
                                "plain form (book_build/chapter_notebooks.py)")
        body = [b[len(indent):] if b.startswith(indent) else b.lstrip() for b in body]
        options: dict[str, str] = {}
        while body and _OPTION.match(body[0]):
            option = _OPTION.match(body[0])
            options[option["key"]] = option["value"]
            body = body[1:]
        content = "\n".join(body).strip("\n")
        if name == "dropdown":
            title = self.roles(self.resolver.translate(match["argument"]), line)
            inner = self.markdown(content, line + 1)
            block = ["<details>", f"<summary>{title}</summary>", "", *inner.split("\n"), "",
                     "</details>"]
        elif name == "figure":
            block = self.figure(match["argument"], options, content, line)
        else:   # literalinclude
            code = self.resolver.include(match["argument"], options).rstrip("\n")
            block = [f"```{options.get('language', '')}", *code.split("\n"), "```"]
        return [indent + b if b else b for b in block]

    def figure(self, path: str, options: dict[str, str], caption: str, line: int) -> list[str]:
        image = self.resolver.image(path)
        mime = mimetypes.guess_type(image.name)[0] or "application/octet-stream"
        self.attachments[image.name] = {mime: base64.b64encode(image.read_bytes()).decode()}
        alt = self.resolver.translate(options.get("alt", "")).replace("\n", " ")
        label = options.get("name")
        number = self.resolver.reference("numref", label, None) if label else ""
        caption = self.markdown(caption, line + 1).replace("\n", " ").strip()
        shown = f"**{number}** {caption}".strip() if number else caption
        return [f"![{alt}](attachment:{image.name})", "", shown]


def plain_notebook(source: Path, resolver: Resolver, language: str = "en",
                   where: str | None = None) -> nbformat.NotebookNode:
    """The chapter at ``source`` (MyST markdown, jupytext) as a plain Jupyter notebook in
    the site's language (see the module's docstring). Raises :class:`UnknownSyntax`."""
    notebook = jupytext.read(source)
    where = where or source.name
    plain = nbformat.v4.new_notebook()
    plain.metadata = {
        "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
        "language_info": {"name": "python"},
    }
    if language != "en":
        plain.metadata["language"] = language
    for index, cell in enumerate(notebook.cells):
        caption = None
        if cell.cell_type == "code":
            new = nbformat.v4.new_code_cell(cell.source)
            tags = cell.metadata.get("tags")
            if tags:
                new.metadata["tags"] = list(tags)
            caption = _output_caption(cell, resolver, where)
        elif cell.cell_type == "markdown":
            converter = _Converter(resolver, where)
            new = nbformat.v4.new_markdown_cell(converter.markdown(cell.source))
            if converter.attachments:
                new.attachments = converter.attachments
        else:
            continue
        new.id = f"cell-{index}"
        plain.cells.append(new)
        if caption is not None:     # the figure the code draws, numbered as on the page
            plain.cells.append(nbformat.v4.new_markdown_cell(caption, id=f"cell-{index}-caption"))
    nbformat.validate(plain)
    return plain


def _output_caption(cell: nbformat.NotebookNode, resolver: Resolver, where: str) -> str | None:
    """``**Fig. 2.3** caption`` of the figure a code cell draws (its ``mystnb.figure``
    metadata), for a markdown cell after it; None if the cell has no caption."""
    figure = cell.metadata.get("mystnb", {}).get("figure") or {}
    if not figure.get("caption"):
        return None
    caption = _Converter(resolver, where).markdown(str(figure["caption"]).strip())
    caption = caption.replace("\n", " ").strip()
    name = figure.get("name")
    number = resolver.reference("numref", str(name), None) if name else ""
    return f"**{number}** {caption}" if number else caption
