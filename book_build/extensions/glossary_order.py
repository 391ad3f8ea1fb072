"""Sphinx extension: the glossary read in the page's language, in that language's order.

The glossary (``book/appendix/glossary.md``) lists each term under its English name and
its Chinese name (two ``term`` lines of one entry), sorted by the English one (``:sorted:``
sorts while the English page is read, before any translation). In a Chinese build this
extension makes it a Chinese glossary:

* each entry shows its Chinese name, with the English one beside it in the same line
  (``注意力池化 · attention pooling``, the English marked ``lang="en"`` for screen
  readers); the entry keeps the anchors of both names, so every ``{term}`` link of the
  pages still lands on it;
* the entries are in pinyin order, the order of Chinese dictionaries (``pypinyin``: by
  the syllables' letters, then their tones, so 残差 ``can2 cha1`` comes before 词袋
  ``ci2 dai4``); an entry without a Chinese name (BLEU, softmax) is ordered by its
  letters among them.

An English build is left as it is.
"""

from __future__ import annotations

import re

from docutils import nodes
from pypinyin import Style, lazy_pinyin
from sphinx import addnodes
from sphinx.application import Sphinx
from sphinx.transforms import SphinxTransform

from .languages import language_of

CJK = re.compile(r"[\u3400-\u9fff]")
SEPARATOR = " · "


def reading_key(term: str) -> list[str]:
    """The pinyin sort key of a term: its syllables with tone numbers (``注意力`` ->
    ``["zhu4", "yi4", "li4"]``), Latin words as their lower-case letters."""
    key = []
    for part in lazy_pinyin(term, style=Style.TONE3, neutral_tone_with_five=True):
        key.extend(part.lower().split())
    return key


def term_text(term: nodes.term) -> str:
    return "".join(node.astext() for node in term.children
                   if not isinstance(node, addnodes.index)).strip()


def chinese_first(item: nodes.definition_list_item) -> str:
    """Make the entry's first term its Chinese name with the English beside it; returns
    the text the entry is sorted by."""
    terms = [node for node in item.children if isinstance(node, nodes.term)]
    chinese = next((term for term in terms if CJK.search(term_text(term))), None)
    if chinese is None:
        return term_text(terms[0])
    for term in terms:
        if term is chinese:
            continue
        beside = nodes.inline("", "", classes=["glossary-other-name", "language-en"])
        beside += [child.deepcopy() for child in term.children
                   if not isinstance(child, addnodes.index)]
        chinese += [nodes.inline("", SEPARATOR, classes=["glossary-separator"]), beside]
        chinese["ids"] += [name for name in term["ids"] if name not in chinese["ids"]]
        chinese += [child for child in term.children if isinstance(child, addnodes.index)]
        item.remove(term)
    item.remove(chinese)
    item.insert(0, chinese)
    return term_text(chinese).split(SEPARATOR)[0]


class ChineseGlossary(SphinxTransform):
    """Runs after the translation of the page (Sphinx's ``Locale``, priority 20) and after
    Sphinx sorts a ``:sorted:`` glossary by its translated first terms, by their code
    points (``GlossarySorter``, priority 500), which this order replaces."""

    default_priority = 510

    def apply(self, **kwargs) -> None:
        if not language_of(self.config).code.startswith("zh"):
            return
        for glossary in self.document.findall(addnodes.glossary):
            for entries in glossary.findall(nodes.definition_list):
                items = [node for node in entries.children
                         if isinstance(node, nodes.definition_list_item)]
                keyed = sorted(((reading_key(chinese_first(item)), index, item)
                                for index, item in enumerate(items)), key=lambda k: k[:2])
                entries[:] = [item for _, _, item in keyed]


def setup(app: Sphinx) -> dict:
    app.add_transform(ChineseGlossary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
