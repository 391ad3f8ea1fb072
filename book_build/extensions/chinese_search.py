"""Sphinx extension: a Chinese site whose search finds Chinese words.

Chinese is written without spaces, so a search index needs a segmenter to find its words:
Sphinx's Chinese search (``sphinx.search.zh``, chosen by ``language = "zh_CN"``) uses
``jieba`` when it is installed and otherwise indexes none of the Chinese text at all. This
extension makes the Chinese build refuse to run without it, and teaches it the course's own
terms, the Chinese names of the glossary's terms (``book/appendix/glossary.md``, the one
place the course names its terms in both languages):

* they go into a jieba user dictionary, so that ``打分函数`` is segmented as one word (and
  its parts, as jieba's search mode always adds them);
* a segmenter decides by context, and a term inside a longer run of characters can be cut
  otherwise (``自注意力模块`` reads as 自注意力 + 模块, and ``注意力模块`` is not seen): every
  term found in a text is indexed for it as well, so a reader who searches for a term finds
  every page that uses it. A name with punctuation or a space (``编码器–解码器``) is
  searched, and indexed, as its words.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

from sphinx import search
from sphinx.application import Sphinx
from sphinx.config import Config
from sphinx.errors import ConfigError
from sphinx.search.zh import SearchChinese

GLOSSARY = Path("book") / "appendix" / "glossary.md"
CJK = re.compile(r"[\u3400-\u9fff]")
# A user dictionary's frequency: high enough that jieba keeps each term whole (its own
# dictionary's common words are in the thousands to hundreds of thousands).
FREQUENCY = 100_000


def glossary_terms(page: Path) -> list[tuple[str, str]]:
    """(English, Chinese) name of every term of the glossary page ``page``: in its
    ``{glossary}`` block, each entry's unindented lines, the English name first."""
    text = page.read_text(encoding="utf-8")
    block = re.search(r"^```\{glossary\}\n(.*?)^```", text, re.M | re.S)
    if block is None:
        raise ValueError(f"{page}: no {{glossary}} block")
    terms, names = [], []
    for line in block.group(1).splitlines() + [""]:
        if line and not line[0].isspace() and not line.startswith(":"):
            names.append(line.strip())
            continue
        if names:
            english = [n for n in names if not CJK.search(n)]
            chinese = [n for n in names if CJK.search(n)]
            terms += [(english[0] if english else "", name) for name in chinese]
            names = []
    return terms


def glossary_words(page: Path) -> list[str]:
    """The Chinese words of the glossary's Chinese names (a name with punctuation or a space
    gives each of its words), longest first."""
    words = {word for _, name in glossary_terms(page) for word in re.split(r"\W+", name)
             if CJK.search(word)}
    return sorted(words, key=lambda word: (-len(word), word))


class CourseChinese(SearchChinese):
    """Sphinx's Chinese search, which also indexes every one of :attr:`terms` of two
    characters or more found in a text, however jieba cut the text around it, and keeps a
    one-character term (键, 值, 头) where jieba cut it out as a word (Sphinx drops every
    one-character word; a substring match would find 键 in 关键)."""

    terms: tuple[str, ...] = ()

    def split(self, input: str) -> list[str]:  # noqa: A002 (Sphinx's name)
        return super().split(input) + [term for term in self.terms
                                       if len(term) > 1 and term in input]

    def word_filter(self, stemmed_word: str) -> bool:
        return super().word_filter(stemmed_word) or stemmed_word in self.terms


def search_dictionary(app: Sphinx, config: Config) -> None:
    """In a Chinese build, jieba must be importable, and loads the glossary's terms."""
    if not (config.language or "").startswith("zh"):
        return
    try:
        import jieba
    except ImportError as error:
        raise ConfigError("the Chinese site's search needs jieba (pip install -r "
                          "requirements.txt): without it Chinese text is not indexed") from error
    jieba.setLogLevel(logging.WARNING)      # not its progress messages in the build's output
    words = glossary_words(Path(app.srcdir) / GLOSSARY)
    CourseChinese.terms = tuple(words)
    search.languages["zh"] = CourseChinese
    path = Path(app.doctreedir) / "search-words.zh.txt"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(f"{word} {FREQUENCY}\n" for word in words), encoding="utf-8")
    config.html_search_options = {**(config.html_search_options or {}), "dict": str(path)}


def setup(app: Sphinx) -> dict:
    app.connect("config-inited", search_dictionary)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
