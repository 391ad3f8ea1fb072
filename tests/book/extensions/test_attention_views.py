"""book_build.extensions.attention_views: the views' script served once, on their pages
only; their menus, headings and titles in the page's language."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest
from babel.messages.catalog import Catalog
from babel.messages.pofile import write_po

from attention_course.attention_view import BUNDLE_PATH, KEYBOARD_WORDS, attention_view

from .conftest import notebook

EXTENSIONS = ["myst_nb", "book_build.extensions.attention_views"]
TITLE = "Cross-attention"
KEYBOARD_CHINESE = {"choose": "查看{tokens}之一的权重：", "none": "无",
                    "gives": "{token}给{tokens}的权重", "receives": "{token}从{tokens}得到的权重",
                    "largest": "（最大：{weights}）", "table": "{token}的全部权重（表格）",
                    "weight": "权重"}


def view_output() -> dict:
    """A view as a page's cell displays it (its HTML output, the script not inline)."""
    view = attention_view(["drei", "hundert"], ["three", "hundred"], np.full((2, 2), 0.5),
                          title=TITLE, source_title="source words",
                          target_title="output tokens", inline=False)
    return {"output_type": "display_data", "data": {"text/html": view.to_html(),
                                                     "text/plain": "<AttentionView>"}}


def pages() -> dict[str, str]:
    return {"index.md": "# Views\n\n```{toctree}\nview\nplain\n```\n",
            "view.ipynb": notebook("A view", [view_output()]),
            "plain.ipynb": notebook("No view")}


def figures_catalogue(translations: dict[str, str]) -> bytes:
    catalog = Catalog(locale="zh_CN")
    for source, translation in translations.items():
        catalog.add(source, translation)
    with __import__("io").BytesIO() as buffer:
        write_po(buffer, catalog)
        return buffer.getvalue()


def test_the_script_is_written_once_and_loaded_only_where_there_is_a_view(build):
    built = build(pages(), EXTENSIONS, nb_execution_mode="off")
    assert built.error is None, built.warnings
    assert (built.outdir / "_static" / BUNDLE_PATH).stat().st_size > 800_000
    assert BUNDLE_PATH in built.page("view") and "defer" in built.page("view")
    assert BUNDLE_PATH not in built.page("plain")


@pytest.mark.parametrize("complete", [True, False])
def test_in_another_language_a_views_words_are_translated_or_warned_about(build, complete):
    translations = {"source words": "源语词", "output tokens": "输出词元", TITLE: "交叉注意力",
                    "The interactive attention view needs JavaScript; the figures show the "
                    "same weights.": "交互式注意力视图需要 JavaScript；图中是同样的权重。",
                    **{KEYBOARD_WORDS[key]: text for key, text in KEYBOARD_CHINESE.items()}}
    if not complete:
        del translations[TITLE]
    built = build({**pages(), "locales/zh_CN/LC_MESSAGES/figures.po":
                   figures_catalogue(translations)},
                  EXTENSIONS, nb_execution_mode="off", language="zh_CN", locale_dirs=["locales"])
    assert built.error is None, built.warnings
    spec = json.loads(re.search(r'class="attention-view-spec">(.*?)</script>',
                                built.page("view"), re.S).group(1))
    words = json.dumps(spec, ensure_ascii=False)
    assert "源语词" in words and "输出词元" in words
    assert (spec["title"]["text"] == "交叉注意力") is complete
    keyboard = json.loads(re.search(r'class="attention-view-words">(.*?)</script>',
                                    built.page("view"), re.S).group(1))
    assert keyboard == {**KEYBOARD_CHINESE, "queries": "输出词元", "keys": "源语词"}
    assert ("attention view without a zh_CN translation of ['Cross-attention']"
            in built.warnings) is not complete
