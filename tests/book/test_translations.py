"""The Chinese catalogues (``locales/zh_CN``): complete, their markup intact, compilable.

One catalogue per page, made by Sphinx's gettext builder; ``book/_ext/check_translations.py``
checks each entry. The checker itself is proven on a catalogue with the faults it must find.
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from tests.conftest import REPO, toc_pages

sys.path.insert(0, str(REPO / "book" / "_ext"))
from check_translations import problems_of  # noqa: E402  (book/_ext is not a package)

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


# A translated build stops on a message without its translation
# (book/_ext/sphinx_languages.py): shown on a two-page Sphinx project.
PAGE = """Attention
=========

A weighted sum of values.

The weights sum to one.
"""
TRANSLATED = {"Attention": "注意力", "A weighted sum of values.": "值的加权求和。",
              "The weights sum to one.": "权重之和为一。"}


def build_translated(tmp_path, translations: dict[str, str], fuzzy: frozenset = frozenset()):
    (tmp_path / "conf.py").write_text(
        f"import sys\nsys.path.insert(0, {str(REPO / 'book' / '_ext')!r})\n"
        "extensions = ['sphinx_languages']\nlanguage = 'zh_CN'\n"
        "locale_dirs = ['locales']\ngettext_compact = False\n")
    (tmp_path / "index.rst").write_text(PAGE + "\n.. toctree::\n\n   other\n")
    (tmp_path / "other.rst").write_text(PAGE)
    for page in ("index", "other"):
        catalog = Catalog(locale="zh_CN")
        for source, translation in translations.items():
            catalog.add(source, translation, flags=["fuzzy"] if source in fuzzy else [])
        folder = tmp_path / "locales" / "zh_CN" / "LC_MESSAGES"
        folder.mkdir(parents=True, exist_ok=True)
        with (folder / f"{page}.po").open("wb") as f:
            write_po(f, catalog)
    return subprocess.run([sys.executable, "-m", "sphinx", "-b", "html", "-q", str(tmp_path),
                           str(tmp_path / "_build")], capture_output=True, text=True,
                          timeout=300, check=False)


def test_a_complete_catalogue_builds(tmp_path):
    result = build_translated(tmp_path, TRANSLATED)
    assert result.returncode == 0, result.stderr
    assert "权重之和为一" in (tmp_path / "_build" / "other.html").read_text()


@pytest.mark.parametrize("how", ["missing", "fuzzy"])
def test_a_missing_translation_stops_the_build_and_is_named(tmp_path, how):
    translations = dict(TRANSLATED)
    if how == "missing":
        del translations["The weights sum to one."]
    result = build_translated(tmp_path, translations,
                              fuzzy=frozenset({"The weights sum to one."} if how == "fuzzy"
                                              else ()))
    assert result.returncode != 0
    assert "2 message(s) have no zh_CN translation" in result.stderr, result.stderr
    assert "index.rst:6: The weights sum to one." in result.stderr, result.stderr
    assert "other.rst:6: The weights sum to one." in result.stderr, result.stderr


# The exercises' diagrams (SVG files released beside the notebooks) have a Chinese twin,
# <name>.zh_CN.svg, which Sphinx shows on the Chinese pages (figure_language_filename) and the
# Chinese notebooks link: the same drawing, its words in Chinese.
DIAGRAMS = sorted(p for p in (REPO / "solutions").glob("*/*.svg") if ".zh_CN." not in p.name)
# Words that are the diagram's data or code, the same in both languages.
NOT_PROSE = {"drei", "hundert", "vier", "und", "zwanzig", "out", "softmax", "tanh", "argmax",
             "view", "transpose", "reshape"}


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
