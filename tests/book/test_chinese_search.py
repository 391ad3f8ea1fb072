"""The Chinese site's search finds Chinese words (book_build/extensions/chinese_search.py).

Sphinx indexes Chinese text only when jieba segments it into words; the course's own terms
come from the glossary. For each Chinese term of the glossary, the pages whose text holds it
are read from the built Chinese site, and the index must lead to every one of them; the
search page, in Chromium, must list them when a reader types the term.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from urllib.parse import quote, urlsplit

import pytest
from bs4 import BeautifulSoup

from book_build.extensions.chinese_search import GLOSSARY, glossary_terms
from tests.book.test_browser import context, open_page, served  # noqa: F401  (fixtures)
from tests.conftest import REPO

pytestmark = pytest.mark.xdist_group("book")

CHINESE = "zh"
# Terms of the lecture a student searches for, each on several chapters.
SEARCHED = ["打分函数", "位置编码", "多头注意力", "掩码", "编码器", "对齐", "自注意力", "软注意力"]


def _index(root: Path) -> dict:
    text = (root / "searchindex.js").read_text(encoding="utf-8")
    return json.loads(text[text.index("(") + 1:text.rindex(")")])


def _found(index: dict, term: str) -> set[str]:
    """The pages the index gives for ``term`` (in their text or in a title)."""
    pages: set[str] = set()
    for table in ("terms", "titleterms"):
        hits = index[table].get(term, [])
        pages |= {index["docnames"][i] for i in ([hits] if isinstance(hits, int) else hits)}
    return pages


@pytest.fixture(scope="module")
def page_texts(site) -> dict[str, str]:
    """{page: the text of its article} of every page of the Chinese site."""
    root = site / CHINESE
    texts = {}
    for path in root.rglob("*.html"):
        page = path.relative_to(root).with_suffix("").as_posix()
        article = BeautifulSoup(path.read_text(encoding="utf-8"), "html.parser").find(
            "article")
        if article is not None and page not in ("search", "genindex"):
            for hidden in article.select("script, style, img"):
                hidden.decompose()
            texts[page] = article.get_text(" ")
    return texts


def test_the_glossary_names_its_terms_in_both_languages():
    terms = glossary_terms(REPO / GLOSSARY)
    assert len(terms) >= 50
    assert all(english and re.search(r"[\u4e00-\u9fff]", chinese) for english, chinese in terms)
    assert ("positional encoding", "位置编码") in terms


def test_every_glossary_term_leads_to_every_page_that_uses_it(site, page_texts):
    index = _index(site / CHINESE)
    assert index["docnames"], "an empty index"
    missed, used = {}, 0
    for _, term in glossary_terms(REPO / GLOSSARY):
        holding = {page for page, text in page_texts.items() if term in text}
        used += len(holding) > 1            # used beyond the glossary itself
        # a name with punctuation or a space is searched as its words: each leads there
        for word in [w for w in re.split(r"\W+", term) if re.search(r"[\u4e00-\u9fff]", w)]:
            if len(word) == 1:      # where jieba finds it a word: at least in the glossary
                lost = {"book/appendix/glossary"} - _found(index, word)
            else:
                lost = holding - _found(index, word)
            if lost:
                missed[word] = sorted(lost)
    assert used >= 30, used
    assert not missed, missed


def test_the_english_site_still_finds_english_words(site):
    index = _index(site)
    assert {"book/encoder/self-attention", "book/encoder/multi-head"} <= _found(index, "head")


@pytest.mark.parametrize("term", SEARCHED)
def test_searching_a_term_lists_the_pages_that_use_it(served, context, page_texts,  # noqa: F811
                                                       term):
    holding = {page for page, text in page_texts.items() if term in text}
    assert len(holding) >= 3, (term, holding)
    page, problems = open_page(context, f"{served}{CHINESE}/search.html?q={quote(term)}")
    # searchtools.js lists the results one by one, then writes its summary ("found N
    # pages"), which is empty until then. (Not its progress pulse: a pulse already
    # scheduled when the search stops starts it again, sphinx 7.4's searchtools.js.)
    page.wait_for_function("() => typeof Search !== 'undefined' && Search.status"
                           " && Search.status.innerText.trim() !== ''")
    links = page.eval_on_selector_all("#search-results ul.search li a",
                                      "links => links.map(a => a.href)")
    page.close()
    base = urlsplit(f"{served}{CHINESE}/").path
    listed = {urlsplit(link).path[len(base):].removesuffix(".html") for link in links}
    assert holding <= listed, (term, sorted(holding - listed))
    assert not problems, problems
