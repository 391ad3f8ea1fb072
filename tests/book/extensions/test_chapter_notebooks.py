"""A chapter's MyST markdown as a plain notebook (book_build/chapter_notebooks.py), with a
resolver that stands for Sphinx; the built site's notebooks are checked in test_book.py."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from book_build.chapter_notebooks import UnknownSyntax, plain_notebook

HEADER = """---
jupytext:
  text_representation:
    extension: .md
    format_name: myst
kernelspec:
  display_name: Python 3
  language: python
  name: python3
---
"""

SHOWN = {("eq", "eq-score"): "(2.1)", ("numref", "fig-one"): "Fig. 2.1",
         ("doc", "../overview/general-form"): "The general form",
         ("cite:t", "bahdanau2015"): "Bahdanau et al. [2015]",
         ("cite:p", "vaswani2017"): "[Vaswani et al., 2017]"}


class Resolver:
    """Sphinx's answers for a made-up page; a translation marks every text it was given."""

    def __init__(self, folder: Path, translate: bool = False) -> None:
        self.folder, self.translating = folder, translate
        self.translated: list[str] = []

    def translate(self, text: str) -> str:
        self.translated.append(text)
        return text.replace("keys", "键") if self.translating else text

    def reference(self, role: str, target: str, title: str | None) -> str:
        if role == "term":
            return title or target
        return title or SHOWN[role, target]

    def image(self, path: str) -> Path:
        return self.folder / path

    def include(self, path: str, options: dict[str, str]) -> str:
        assert options == {"language": "python", "pyobject": "Layer"}
        return "class Layer:\n    pass\n"


def chapter(tmp_path: Path, body: str) -> Path:
    (tmp_path / "one.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>")
    page = tmp_path / "page.md"
    page.write_text(HEADER + body)
    return page


PAGE = """
# A chapter

The {term}`keys <key>` and the {term}`query`, as in {doc}`../overview/general-form`
and {cite:t}`bahdanau2015`, see {numref}`fig-one` and {eq}`eq-score` {cite:p}`vaswani2017`.

$$
s_i = f(q, k_i)
$$ (eq-score)

```{figure} one.svg
:name: fig-one
:alt: One query and its keys.
:width: 100%

The three steps, as in {eq}`eq-score`.
```

```{code-cell} ipython3
x = 1  # {term}`not a role` in code
```

1. A question about the keys.

   :::{dropdown} Solution
   The scores of {eq}`eq-score`:

   $$
   a = 1
   $$

   ```python
   print("{doc}`left alone`")
   ```
   :::

```{literalinclude} ../layers.py
:language: python
:pyobject: Layer
```
"""


def test_a_chapter_becomes_a_plain_notebook(tmp_path):
    notebook = plain_notebook(chapter(tmp_path, PAGE), Resolver(tmp_path))
    kinds = [cell.cell_type for cell in notebook.cells]
    assert kinds == ["markdown", "code", "markdown"]
    first, code, last = (cell.source for cell in notebook.cells)
    assert code == "x = 1  # {term}`not a role` in code"
    assert "The keys and the query, as in *The general form*" in first
    assert "Bahdanau et al. [2015], see Fig. 2.1 and (2.1) [Vaswani et al., 2017]" in first
    assert "s_i = f(q, k_i)\n\\tag{2.1}\n$$" in first
    assert "![One query and its keys.](attachment:one.svg)\n\n**Fig. 2.1** The three steps, " \
           "as in (2.1)." in first
    assert "{" + "term}" not in first and "```{" not in first
    attachment = notebook.cells[0].attachments["one.svg"]["image/svg+xml"]
    assert base64.b64decode(attachment).startswith(b"<svg")
    # a drop-down inside a list item: folded, its markdown and code kept, indented
    assert "   <details>\n   <summary>Solution</summary>\n\n   The scores of (2.1):" in last
    assert '   print("{doc}`left alone`")' in last
    assert last.rstrip().endswith("```python\nclass Layer:\n    pass\n```")
    assert notebook.metadata.kernelspec.name == "python3"
    assert [cell.id for cell in notebook.cells] == ["cell-0", "cell-1", "cell-2"]


def test_every_text_is_translated_before_its_roles_are_resolved(tmp_path):
    resolver = Resolver(tmp_path, translate=True)
    notebook = plain_notebook(chapter(tmp_path, PAGE), resolver, language="zh_CN")
    assert notebook.metadata.language == "zh_CN"
    assert "The 键 and the query" in notebook.cells[0].source   # {term}`keys <key>`
    assert "Solution" in resolver.translated and "One query and its keys." in \
        resolver.translated
    assert all("`not a role`" not in text for text in resolver.translated)   # code is not


@pytest.mark.parametrize("body, named", [
    ("Read {download}`this <file.txt>`.\n", "the role {download}"),
    (":::{note}\nA note.\n:::\n", "the directive {note}"),
    (":::{dropdown} Open\nNever closed.\n", "a fence that is never closed"),
])
def test_syntax_without_a_plain_form_is_refused_with_its_line(tmp_path, body, named):
    with pytest.raises(UnknownSyntax, match=named) as error:
        plain_notebook(chapter(tmp_path, "\n# Title\n\n" + body), Resolver(tmp_path),
                       where="book/page")
    assert "book/page, line " in str(error.value)


FIGURE_CELL = """
# A chapter

```{code-cell} ipython3
---
tags: [hide-input]
mystnb:
  figure:
    caption: >-
      The weights of the keys,
      as in {eq}`eq-score`.
    name: fig-one
  image:
    alt: A heatmap.
---
plot()
```

{numref}`fig-one` shows them.
"""


def test_a_figure_drawn_by_code_is_followed_by_its_number_and_caption(tmp_path):
    resolver = Resolver(tmp_path, translate=True)
    notebook = plain_notebook(chapter(tmp_path, FIGURE_CELL), resolver, language="zh_CN")
    sources = [cell.source for cell in notebook.cells]
    assert sources[1:4] == ["plot()", "**Fig. 2.1** The weights of the 键, as in (2.1).",
                            "Fig. 2.1 shows them."]
    assert notebook.cells[1].metadata == {"tags": ["hide-input"]}
    assert "The weights of the keys, as in {eq}`eq-score`." in resolver.translated
