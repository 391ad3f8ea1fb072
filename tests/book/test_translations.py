"""The Chinese catalogues (``locales/zh_CN``): complete, their markup intact, compilable.

One catalogue per page, made by Sphinx's gettext builder; :mod:`book_build.check_translations`
checks each entry. The checker itself is proven on a catalogue with the faults it must find.
"""

from __future__ import annotations

import re

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from book_build import check_terms
from book_build.check_translations import problems_of
from tests.conftest import REPO, toc_pages

MESSAGES = REPO / "locales" / "zh_CN" / "LC_MESSAGES"
CATALOGUES = sorted(MESSAGES.rglob("*.po"))


def test_there_is_a_catalogue_for_every_page():
    names = {str(path.relative_to(MESSAGES)) for path in CATALOGUES}
    assert {f"{page}.po" for page in toc_pages()} <= names


@pytest.mark.parametrize("catalogue", CATALOGUES,
                         ids=[str(c.relative_to(REPO / "locales")) for c in CATALOGUES])
def test_every_entry_is_translated_with_its_markup(catalogue):
    assert problems_of(catalogue) == []


@pytest.mark.parametrize(("source", "translation", "fault"), [
    ("A {term}`query`.", "", "not translated"),
    ("A {term}`query`.", "一个{term}`查询`。", "roles differ"),
    ("The weights {term}`sum <attention weight>` to one.",
     "权重之{term}`和 <attention weight>`为一。", None),
    ("With $a_i$ and $b$.", "有 $a_i$。", "math differs"),
    ("Call `train`.", "调用 `fit`。", "inline code differs"),
    # The words of \text{...} in math are prose, translated; the rest of the math is not.
    ("Zero $\\text{otherwise}$.", "$\\text{否则}$为零。", None),
    ("$x_{\\text{word}}$ is large.", "$y_{\\text{词}}$ 很大。", "math differs"),
])
def test_the_checker_finds_what_it_must(tmp_path, source, translation, fault):
    catalog = Catalog(locale="zh_CN")
    catalog.add(source, translation)
    path = tmp_path / "page.po"
    with path.open("wb") as f:
        write_po(f, catalog)
    problems = problems_of(path)
    assert (fault is None and problems == []) or \
        (fault is not None and len(problems) == 1 and fault in problems[0]), problems


def test_every_concept_has_one_chinese_term():
    """locales/zh_CN/terms.toml: no page, exercise, figure or printed table writes a
    concept the course names one way in another (汇聚, never 池化, for pooling)."""
    assert check_terms.concepts("zh_CN"), "terms.toml lists no concept"
    assert check_terms.problems("zh_CN") == []


def test_the_term_check_names_every_other_way_of_writing_a_concept(tmp_path):
    messages = tmp_path / "zh_CN" / "LC_MESSAGES"
    (messages / "book").mkdir(parents=True)
    (tmp_path / "zh_CN" / check_terms.TERMS).write_text(
        '[pooling]\nglossary = "attention pooling"\nterm = "汇聚"\nnot = ["池化"]\n'
        '[batch]\nglossary = "attention pooling"\nterm = "批量"\nnot = ["批次"]\n',
        encoding="utf-8")
    catalog = Catalog(locale="zh_CN")
    catalog.add("Mean pooling.", "平均池化。")
    catalog.add("Attention pooling.", "注意力汇聚。")
    catalog.add("One batch.", "一个批次。")
    with (messages / "book" / "page.po").open("wb") as f:
        write_po(f, catalog)
    found = check_terms.problems("zh_CN", locales=tmp_path)
    assert len(found) == 3, found
    assert "[batch]" in found[0] and "注意力汇聚" in found[0]  # not the glossary's word
    assert "page.po" in found[1] and "'池化'" in found[1] and "'汇聚'" in found[1]
    assert "page.po" in found[2] and "'批次'" in found[2]


# The exercises' diagrams (SVG files released beside the notebooks) have a Chinese twin,
# <name>.zh_CN.svg, which Sphinx shows on the Chinese pages (figure_language_filename) and the
# Chinese notebooks link: the same drawing, its words in Chinese.
# The assignments' diagrams and the book's own figures (book/figures).
DIAGRAMS = sorted(p for p in [*(REPO / "solutions").glob("*/*.svg"),
                              *(REPO / "book" / "figures").glob("*.svg")]
                  if ".zh_CN." not in p.name)
# Words that are the diagram's data or code, the same in both languages.
NOT_PROSE = {"drei", "hundert", "vier", "und", "zwanzig", "out", "softmax", "tanh", "argmax",
             "view", "transpose", "reshape", "exp", "layernorm"}


def svg_texts(path):
    import xml.etree.ElementTree as ET

    tree = ET.parse(path)
    shapes, texts = [], []
    for element in tree.iter():
        attributes = {k: v for k, v in element.attrib.items() if k != "font-family"}
        shapes.append((element.tag, attributes))
        if element.tag.endswith(("}text", "}tspan", "}title")) and (element.text or "").strip():
            texts.append(element.text.strip())
    return shapes, texts


def is_prose(text: str) -> bool:
    words = re.findall(r"(?<![\w.])[A-Za-z]{3,}(?![\w(])", text)
    return any(word.lower() not in NOT_PROSE and word not in {"GRU"} for word in words)


@pytest.mark.parametrize("diagram", DIAGRAMS, ids=[p.name for p in DIAGRAMS])
def test_every_diagram_has_a_chinese_twin_with_the_same_drawing(diagram):
    twin = diagram.with_name(diagram.stem + ".zh_CN.svg")
    assert twin.exists(), f"{twin.name} is missing"
    english_shapes, english_texts = svg_texts(diagram)
    chinese_shapes, chinese_texts = svg_texts(twin)
    assert chinese_shapes == english_shapes, "the drawings differ (not only their words)"
    assert len(chinese_texts) == len(english_texts)
    prose = [(en, zh) for en, zh in zip(english_texts, chinese_texts, strict=True) if is_prose(en)]
    assert prose, "the checker found no words to translate"
    untranslated = [en for en, zh in prose if not re.search(r"[\u4e00-\u9fff]", zh)]
    assert not untranslated, untranslated
    same = [en for en, zh in zip(english_texts, chinese_texts, strict=True)
            if not is_prose(en) and en != zh]
    assert not same, f"code or data changed: {same}"


def test_the_diagram_check_sees_an_untranslated_word():
    assert is_prose("2 · split into heads") and is_prose("query = previous state")
    assert not is_prose(".view(B, L, H, d_h)") and not is_prose("drei")
    assert not is_prose("a_ij = softmaxⱼ(vᵀ tanh(W_q s_(i−1) + W_k h_j))")
