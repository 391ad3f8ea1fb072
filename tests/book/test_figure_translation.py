"""The book's figures in Chinese: the Chinese build shows the Chinese renderings the
notebooks' one execution stored, executes nothing, and the English site is unchanged.

The Chinese site is the one `make book` builds (the ``site`` fixture: ``_build/html/zh``),
from the cache the English build filled; that it executes nothing and ends without a
warning (an untranslated figure or view string is one) is checked when it is built.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
from pathlib import Path

import pytest

from book_build import figure_strings
from book_build.figures.translation import METADATA_KEY, untranslated
from tests.conftest import BOOK_OUTPUT, cached_figures

pytestmark = pytest.mark.xdist_group("book")

PAGE = "book/traditional/attention-module"


@pytest.fixture(scope="session")
def zh_site(site) -> Path:
    """The Chinese site, built from the English build's cache with it."""
    return site / "zh"


def images(html: Path) -> list[str]:
    return re.findall(r'<img[^>]+src="([^"]+/_images/[0-9a-f]{64}\.png)"', html.read_text())


def test_the_views_menus_and_headings_are_translated_in_the_chinese_build(site, zh_site):
    zh = zh_site
    page = "book/traditional/encoder-decoder.html"
    english, chinese = views(site / page), views(zh / page)
    assert len(english) == len(chinese) >= 1
    for en, cn in zip(english, chinese, strict=True):
        assert menus(en) == ["example"] and menus(cn) == ["例子"]
        assert headings(en) == ["output tokens", "source words"]
        assert headings(cn) == ["输出词元", "源语词"]
        labels = [p["bind"]["labels"] for p in cn["params"] if "bind" in p][0]
        assert labels[0].endswith("（德语）"), labels
        assert cn["datasets"] == en["datasets"], "tokens and weights are data"


def views(page: Path) -> list[dict]:
    """The Vega-Lite specifications of a page's interactive views."""
    found = re.findall(r'class="attention-view-spec">(.*?)</script>', page.read_text(), re.S)
    return [json.loads(spec.replace("<\\/", "</")) for spec in found]


def menus(spec: dict) -> list[str]:
    return [p["bind"]["name"].strip() for p in spec["params"] if "bind" in p]


def headings(spec: dict) -> list[str]:
    return [row["t"] for layer in spec["layer"]
            for row in layer.get("data", {}).get("values", [])]


def test_chinese_figures_replace_english_ones(site, zh_site):
    zh = zh_site
    english = images(site / f"{PAGE}.html")
    chinese = images(zh / f"{PAGE}.html")
    assert len(english) == len(chinese) >= 2
    assert not set(english) & set(chinese), "every figure of the page carries text"
    for src in chinese:
        assert (zh / "book/traditional" / src).resolve().is_file(), src


def digest(data: str) -> str:
    return hashlib.sha256(base64.b64decode(data)).hexdigest()


def test_the_english_site_shows_the_english_pngs_and_the_chinese_one_the_chinese(site, zh_site):
    """Output images are named by the SHA-256 of their bytes: each page of the English site
    shows its outputs' ``image/png`` (which the extension leaves as the inline backend drew
    them, tests/course/test_figure_translation.py), in order, and the Chinese site their
    Chinese renderings."""
    zh = zh_site
    figures: dict[str, list] = {}
    for page, _, output in cached_figures():
        figures.setdefault(page, []).append(output)
    assert sum(map(len, figures.values())) >= 40
    for page, outputs in figures.items():
        html = Path(page).with_suffix(".html")
        renderings = [o.metadata["image/png"][METADATA_KEY]["zh_CN"] for o in outputs]
        assert [name(src) for src in images(site / html)] == \
            [digest(o.data["image/png"]) for o in outputs], page
        assert [name(src) for src in images(zh / html)] == \
            [digest(r["image/png"]) for r in renderings], page
        assert all(untranslated(r) == [] for r in renderings), page


def name(src: str) -> str:
    return Path(src).stem


def test_the_figure_catalogue_is_complete_and_up_to_date(site):
    assert figure_strings.main(["--check", "--output-root", str(BOOK_OUTPUT)]) == 0


def test_a_printed_table_is_translated_cell_by_cell_and_line_by_line():
    from book_build.figures.printed_text import markdown_strings, translate_markdown
    from book_build.figures.translation import translate

    printed = ("| model | mean accuracy | worst |\n| --- | ---: | ---: |\n"
               "| GAT | 71.2% | 55.0% |\n| mean | 3 of 5 seeds | - |\n"
               "\nOn the same splits, GAT is better 14 times.")
    catalogue = {"model": "模型", "mean accuracy": "平均准确率", "worst": "最差",
                 "GAT": "GAT", "%1 of %2 seeds": "%2 个种子中的 %1 个",
                 "On the same splits, GAT is better %1 times.":
                 "在相同的划分上，GAT 有 %1 次更好。"}
    shown, record = translate_markdown(printed, lambda text: translate(text, catalogue))
    assert shown.split("\n") == [
        "| 模型 | 平均准确率 | 最差 |", "| --- | ---: | ---: |",
        "| GAT | 71.2% | 55.0% |", "| mean | 5 个种子中的 3 个 | - |", "",
        "在相同的划分上，GAT 有 14 次更好。"]
    missing = [text for _, text, translation in record if translation is None]
    assert missing == ["71.2%", "55.0%", "mean", "-"]      # numbers are not words to translate
    assert ("table cell", "3 of 5 seeds") in markdown_strings(printed)
    assert ("printed text", "On the same splits, GAT is better 14 times.") in \
        markdown_strings(printed)


def test_the_chinese_build_shows_the_printed_tables_in_chinese(site, zh_site):
    from bs4 import BeautifulSoup

    def outputs(root: Path, page: str) -> str:
        soup = BeautifulSoup((root / f"{page}.html").read_text(encoding="utf-8"),
                             "html.parser")
        return " ".join(output.get_text(" ") for output in soup.select(".cell_output"))

    gat, coverage = "book/traditional/graph-attention", "book/traditional/coverage"
    assert "On the same splits" in outputs(site, gat)               # printed in English
    assert "在相同的划分上" in outputs(zh_site, gat)                    # shown in Chinese
    assert "On the same splits" not in outputs(zh_site, gat)
    assert "coverage better" in outputs(site, coverage)
    assert "覆盖机制更好" in outputs(zh_site, coverage)
    assert "coverage better" not in outputs(zh_site, coverage)
