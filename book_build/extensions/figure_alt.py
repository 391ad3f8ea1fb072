"""Sphinx extension: no figure of a notebook's output without alt text.

MyST-NB gives an output image the alt text set in its cell's metadata
(``mystnb: image: alt: ...``, the place for a real description of the plot). Without it,
the HTML would carry the image's file path as its alt text, which tells a screen reader
nothing. This extension gives such images a text that at least says what they are and
where: the plot drawn by the code cell above, in which section -- in the page's language
(the section's title comes translated in a translated build; the words are the course's
table of languages', :mod:`autograder.course.languages`).
"""

from __future__ import annotations

import re

from docutils import nodes
from sphinx.application import Sphinx

from autograder.course.languages import language


def is_cell_output(node: nodes.Node) -> bool:
    return isinstance(node, nodes.container) and "cell_output" in node.get("classes", [])


def describe_output_figures(app: Sphinx, doctree: nodes.document, docname: str) -> None:
    words = language(app.config.language)
    plain, in_section = words.output_figure, words.output_figure_in
    for image in doctree.findall(nodes.image):
        if image.get("alt") or not any(is_cell_output(a) for a in ancestors(image)):
            continue
        section = next((a for a in ancestors(image) if isinstance(a, nodes.section)), None)
        image["alt"] = (in_section.format(title=plain_text(section[0])) if section is not None
                        else plain)


def plain_text(node: nodes.Node) -> str:
    """A title's text, its formulas readable without TeX: ``\\sqrt{d_k}`` -> ``sqrt(d_k)``."""
    def text(n: nodes.Node) -> str:
        if isinstance(n, nodes.math):
            tex = re.sub(r"\\([A-Za-z]+)\s*", r"\1", n.astext())
            return tex.replace("{", "(").replace("}", ")")
        if isinstance(n, nodes.Text):
            return n.astext()
        return "".join(text(child) for child in n.children)
    return text(node)


def ancestors(node: nodes.Node):
    """The node's parent, its parent's parent, ... up to the document."""
    node = node.parent
    while node is not None:
        yield node
        node = node.parent


def setup(app: Sphinx) -> dict:
    app.connect("doctree-resolved", describe_output_figures)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
