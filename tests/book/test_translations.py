"""The Chinese catalogues (``locales/zh_CN``): complete, their markup intact, compilable.

One catalogue per page, made by Sphinx's gettext builder; ``book/_ext/check_translations.py``
checks each entry. The checker itself is proven on a catalogue with the faults it must find.
"""

from __future__ import annotations

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
