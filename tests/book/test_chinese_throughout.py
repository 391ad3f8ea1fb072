"""The Chinese site speaks Chinese throughout: no English sentence left on a Chinese page.

Every page of the Chinese site is read as built: its prose, headings, captions and tables --
the tables the code prints included (``book_build/figures/printed_text.py``) -- the words
of its equations (``\\text{...}``), and its interface (titles, labels and placeholders of
the controls, the site's title and author line). What may stay English is what is not
prose: code and what code prints to its console, the data of the examples (tokens in
italics, sentences the models read or write), citations and the references' list, and
proper names.

An *English sentence* is a run of at least :data:`WORDS_IN_A_SENTENCE` English words with
nothing Chinese between them and within one paragraph, cell or heading (a term given in
English beside its translation, 注意力 (attention), is one or two words); in an equation's
``\\text{...}`` and in a control's title, label or placeholder, any English word counts,
except the names and tokens listed here (an image's description is read like prose).
English on purpose says so: an element marked ``lang="en"`` (the glossary's English
names, the switch to the English page), a quotation in “…” (an example sentence, a message
the reader will see in English), a link to a reference, a label of JupyterLab's menus.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from bs4 import BeautifulSoup, Tag

pytestmark = pytest.mark.xdist_group("book")

CHINESE = "zh"
WORDS_IN_A_SENTENCE = 4
# What separates two runs of English: anything Chinese (characters, their punctuation).
CHINESE_TEXT = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")
WORD = re.compile(r"[A-Za-z][A-Za-z'’]+(?:-[A-Za-z]+)*")
MATH_TEXT = re.compile(r"\\(?:text|textrm|textit|textbf|mbox)\{((?:[^{}]|\{[^{}]*\})*)\}")

# Not prose: code, console output, math (read on its own), the sidebar's search results.
NOT_PROSE = ("script, style, pre, code, kbd, samp, .highlight, .cell_input, .math, "
             ".MathJax, .search-results, "
             # citations: "Vaswani et al. (2017)" and the list of references
             ".cite, div.citation, dl.citation, .bibliography, "
             # data: the examples' tokens and sentences, set in italics; the labels of
             # JupyterLab's menus and buttons, which it shows in English
             "em, i, .menuselection, .guilabel, "
             # what is English on purpose, and says so: lang="en" (the glossary's English
             # names, the language switch's link to the English page)
             '[lang|="en"]')
ATTRIBUTES = ("title", "aria-label", "placeholder", "alt", "data-bs-title")
CITATION = re.compile(r"(^|/)references\.html#")
# Text between the elements that end a line of text (a sentence does not run on from one
# table cell or paragraph into the next).
BLOCKS = ("p, li, td, th, dt, dd, caption, figcaption, h1, h2, h3, h4, h5, h6, div, tr, "
          "summary, blockquote")
BREAK = "\u3000"          # an ideographic space: Chinese text, which ends an English run
QUOTED = re.compile(r"“[^“”\u3400-\u9fff]*”")     # an English quotation: data, or a message
FILE_NAME = re.compile(r"\S*[_/]\S*|\S+\.(?:whl|ipynb|zip|py|csv|pdf)\b")
# Pages that are not prose: the general index lists every term under its English name too.
NOT_CHECKED = {"genindex"}

# English names kept in Chinese text: programs, models, data sets and the lecture's own
# symbols written as words.
NAMES = {"Att-V", "softmax", "logits", "argmax", "tanh", "sigmoid", "ReLU", "GELU",
         "PyTorch", "Jupyter", "JupyterLab", "JupyterHub", "Python", "BERT", "GPT",
         "Transformer", "RNNsearch", "RNNencdec", "BLEU", "GAT", "GCN", "GRU", "LSTM",
         "RNN", "PDF", "Ctrl", "MathJax", "Chromium", "Canvas", "Moodle", "NLP"}
# Words in an equation's \text{...} that are not prose: the Transformer's names of its
# sizes (d_model, d_ff, W^head), and the tokens of the examples (the animal ... it,
# Tom chase Jerry, great and awful, [CLS], <pad>, "The Law ... its application").
SYMBOLS_AND_TOKENS = {"model", "ff", "head", "pad", "CLS", "it", "animal", "street", "Tom",
                      "Jerry", "chase", "great", "awful", "Law", "its"}


def sentences(text: str) -> list[str]:
    """The English sentences of a text: runs without Chinese that hold enough English words."""
    return [" ".join(run.split()) for run in CHINESE_TEXT.split(text)
            if len(english_words(run)) >= WORDS_IN_A_SENTENCE]


def english_words(text: str) -> list[str]:
    return [word for word in WORD.findall(FILE_NAME.sub(" ", text)) if word not in NAMES]


def is_english_on_purpose(element: Tag) -> bool:
    return any(str(node.get("lang", "")).startswith("en")
               for node in [element, *element.parents] if isinstance(node, Tag))


def leftovers(html: str) -> list[str]:
    """What a built Chinese page still says in English, each with where it is."""
    soup = BeautifulSoup(html, "html.parser")
    found = []
    for element in soup.find_all(True):
        if is_english_on_purpose(element) or (
                element.name == "a" and CITATION.search(element.get("href", ""))):
            continue
        for attribute in ATTRIBUTES:
            value = element.get(attribute)
            if not isinstance(value, str):
                continue
            if attribute == "alt":   # a description, which names the example's tokens
                found += [f"<{element.name} alt>: {sentence}"
                          for sentence in sentences(QUOTED.sub(BREAK, value))]
            elif english_words(value) and not value.isupper():
                found.append(f"<{element.name} {attribute}>: {value}")
    for math in soup.select(".math"):
        for words in MATH_TEXT.findall(math.get_text()):
            if [word for word in english_words(words) if word not in SYMBOLS_AND_TOKENS]:
                found.append(f"equation: \\text{{{words}}}")
    title = soup.find("title")
    if title is not None and english_words(title.get_text()):
        found.append(f"<title>: {title.get_text()}")
    for skipped in soup.select(NOT_PROSE):
        skipped.decompose()
    for block in soup.select(BLOCKS):
        block.append(BREAK)
    body = soup.find("body") or soup
    text = QUOTED.sub(BREAK, body.get_text())
    found += [f"text: {sentence}" for sentence in sentences(text)]
    return found


@pytest.fixture(scope="module")
def chinese_pages(site) -> dict[str, Path]:
    root = site / CHINESE
    return {path.relative_to(root).with_suffix("").as_posix(): path
            for path in sorted(root.rglob("*.html"))
            if not path.relative_to(root).parts[0].startswith(("_", "."))
            and path.relative_to(root).with_suffix("").as_posix() not in NOT_CHECKED}


def test_no_english_is_left_on_a_chinese_page(chinese_pages):
    found = {page: leftovers(path.read_text(encoding="utf-8"))
             for page, path in chinese_pages.items()}
    found = {page: items for page, items in found.items() if items}
    assert not found, "\n".join(f"{page}: {item}" for page, items in found.items()
                                for item in items)


@pytest.mark.parametrize(("html", "left"), [
    ("<p>在相同的划分上，GAT 更好。</p>", []),
    ("<p>On the same splits, GAT is better 14 times.</p>",
     ["text: On the same splits, GAT is better 14 times."]),
    ("<p>注意力（attention weight）</p>", []),
    ("<table><tr><td>mean accuracy of the model</td></tr></table>",
     ["text: mean accuracy of the model"]),
    ('<div class="math">\\[x = 0 \\quad \\text{otherwise}\\]</div>',
     ["equation: \\text{otherwise}"]),
    ('<div class="math">\\[\\text{Att-V} = \\sum_i a_i v_i \\quad \\text{否则}\\]</div>', []),
    ('<button title="Toggle primary sidebar"></button>',
     ["<button title>: Toggle primary sidebar"]),
    ("<pre>training loss: 0.003 after many steps</pre><p><em>the cat sat on the mat</em></p>",
     []),
])
def test_the_check_finds_english_and_only_english(html, left):
    assert leftovers(f"<html><body>{html}</body></html>") == left


# Entries of the glossary in the order of a Chinese dictionary (pinyin, then tone): 加权
# (jiā quán) before 加性 (jiā xìng), 残差 (cán) before 词袋 (cí).
PINYIN_ORDER = ["编码器–解码器", "残差连接", "词袋模型", "打分函数", "点积模型", "多头注意力",
                "加权求和", "加性模型", "键", "键值对", "注意力偏置", "注意力权重", "自注意力"]


def test_the_chinese_glossary_is_in_pinyin_order_with_the_english_beside(site):
    soup = BeautifulSoup((site / CHINESE / "book" / "appendix" / "glossary.html")
                         .read_text(encoding="utf-8"), "html.parser")
    entries = soup.select("dl.glossary > dt")
    names = [entry.get_text(" ", strip=True).split(" · ")[0] for entry in entries]
    assert [name for name in names if name in PINYIN_ORDER] == PINYIN_ORDER
    chinese = [entry for entry in entries if re.search(r"[\u4e00-\u9fff]", entry.get_text())]
    assert len(chinese) >= 50
    for entry in chinese:
        beside = entry.select_one('.glossary-other-name[lang="en"]')
        assert isinstance(beside, Tag) and WORD.search(beside.get_text()), entry
    # every link of the Chinese pages to a term still lands on its entry
    anchors = {element["id"] for element in soup.select("[id]")}
    for path in (site / CHINESE / "book").rglob("*.html"):
        page = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser")
        for link in page.select('a[href*="glossary.html#term-"]'):
            assert link["href"].split("#")[1] in anchors, (path.name, link["href"])
