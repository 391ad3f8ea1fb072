"""A written answer as what it says: its content words, in English or Chinese.

The text is normalised (Unicode NFKC, lower case), its markdown and LaTeX punctuation
dropped; Chinese runs are segmented into words with jieba (its dictionary loads once,
silently: jieba logs to stderr by default), other text split into words and numbers;
words that carry no content (English and Chinese function words) are left out, so that
an edit of "the"/"a"/"的" or of punctuation changes nothing. What is compared are
*shingles*, runs of :data:`SHINGLE` consecutive content words (order matters within a
shingle, not between them: reordered sentences still share theirs), each with the line of
the cell where it starts.
"""

from __future__ import annotations

import logging
import re
import unicodedata
from functools import cache

from .fingerprints import Token

SHINGLE = 3       # content words per shingle
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]+")
_WORD = re.compile(r"[^\W_]+", re.UNICODE)
_ENGLISH_STOP = frozenset("""
a an the and or but if then so as of to in on at by for with from into onto over under is
are was were be been being it its this that these those there here which who whom whose
what when where why how we i you he she they them their our my your his her not no do does
did can could would should will shall may might must have has had than too very just also
only each every any all some such own same other both either neither one s t
""".split())
_CHINESE_STOP = frozenset("""
的 了 是 在 和 与 及 或 而 也 就 都 又 还 把 被 让 给 对 从 到 向 以 于 为 之 其 这 那 这个 那个
这些 那些 一个 一 个 我 我们 你 你们 他 她 它 它们 他们 着 过 吗 呢 吧 啊 所以 因为 如果
但是 但 并 并且 而且 可以 会 能 将 要 很 更 最 等 中 上 下
""".split())


@cache
def _jieba():
    """jieba, its dictionary loaded once and its log silenced."""
    import jieba

    jieba.setLogLevel(logging.WARNING)
    logging.getLogger("jieba").setLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def words(text: str) -> list[tuple[str, int]]:
    """(word, line) of every content word of ``text``, in order."""
    out: list[tuple[str, int]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        line = unicodedata.normalize("NFKC", line).lower()
        position = 0
        for match in _CJK.finditer(line):
            out += [(w, number) for w in _latin_words(line[position:match.start()])]
            out += [(w, number) for w in _chinese_words(match.group())]
            position = match.end()
        out += [(w, number) for w in _latin_words(line[position:])]
    return out


def _latin_words(text: str) -> list[str]:
    return [w for w in _WORD.findall(text) if w not in _ENGLISH_STOP]


def _chinese_words(text: str) -> list[str]:
    return [w for w in _jieba().lcut(text) if w.strip() and w not in _CHINESE_STOP]


def prose_tokens(text: str) -> list[Token]:
    """The content words of a written answer as tokens, each with its line."""
    return [Token(word, line) for word, line in words(text)]
