"""Figures in the page's language: translated renderings, the English one untouched.

The kernel side (:mod:`book_build.figures.translation`) on figures drawn here, and once
in a real kernel as the book's build starts it; the catalogue ``figures.po`` itself is
checked against the executed book in ``tests/book/test_figure_translation.py``.
"""

from __future__ import annotations

import base64
import io
import json
import re
import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import nbformat  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402
from babel.messages.catalog import Catalog  # noqa: E402
from babel.messages.pofile import write_po  # noqa: E402
from IPython.core.pylabtools import print_figure  # noqa: E402
from nbclient import NotebookClient  # noqa: E402
from PIL import Image  # noqa: E402

from attention_course.fonts import cjk_family  # noqa: E402
from attention_course.plotting import show_heatmaps  # noqa: E402
from book_build.figures.translation import (  # noqa: E402
    LOCALES_VARIABLE,
    METADATA_KEY,
    VERSION,
    is_current,
    load_catalogues,
    needs_translation,
    render_translations,
    translate,
    untranslated,
)

ZH = {"Keys": "键", "Queries": "查询", "Attention weights": "注意力权重",
      "scaled dot": "缩放点积", "dot": "点积", "Coverage": "覆盖"}


def png(fig) -> str:
    return print_figure(fig, fmt="png", base64=True)


def pixels(data: str) -> np.ndarray:
    return np.asarray(Image.open(io.BytesIO(base64.b64decode(data))).convert("RGB"))


def figures():
    heatmap = show_heatmaps(np.eye(3) / 2, xlabels=["the", "cat", "sat"],
                            ylabels=["a", "b", "c"], titles=["Attention weights"])
    fig, ax = plt.subplots(layout="constrained")
    ax.plot([0, 1], [3, 4], label="scaled dot")
    ax.bar(["dot", "additive"], [1, 2])
    ax.legend()
    ax.set_xlabel("Keys")
    ax.set_title(r"Bandwidth $\sigma$")
    ax.text(0.5, 3.5, "0.25")
    fig.suptitle("Coverage")
    return [heatmap, fig]


@pytest.mark.parametrize("index", [0, 1])
def test_a_translated_figure_differs_and_the_figure_is_left_as_it_was(index):
    fig = figures()[index]
    png(fig)  # the first drawing, which the display shows, settles a constrained layout
    english = png(fig)
    renderings = render_translations(fig, png, {"zh_CN": ZH}, cjk_family())
    chinese = renderings["zh_CN"]["image/png"]
    assert not np.array_equal(pixels(chinese)[:50], pixels(english)[:50]) or \
        pixels(chinese).shape != pixels(english).shape
    assert png(fig) == english, "rendering the translation must not change the figure"
    plt.close(fig)


def test_every_string_is_recorded_with_its_role_and_translation():
    heatmap, fig = figures()
    texts = render_translations(heatmap, png, {"zh_CN": ZH}, cjk_family())["zh_CN"]["texts"]
    assert sorted(map(tuple, texts)) == sorted([
        ("axis label", "Keys", "键"), ("axis label", "Queries", "查询"),
        ("title", "Attention weights", "注意力权重"),
        ("tick", "the", None), ("tick", "cat", None), ("tick", "sat", None)])
    rendering = render_translations(fig, png, {"zh_CN": ZH}, cjk_family())["zh_CN"]
    recorded = {(role, text): translation for role, text, translation in rendering["texts"]}
    assert recorded[("legend", "scaled dot")] == "缩放点积"
    assert recorded[("suptitle", "Coverage")] == "覆盖"
    assert recorded[("tick", "dot")] == "点积", "a tick label the catalogue has is translated"
    assert recorded[("tick", "additive")] is None
    assert ("text", "0.25") not in recorded, "numbers are not strings to translate"
    # the title has no translation; tick labels without one are data
    assert untranslated(rendering) == [r"Bandwidth $\sigma$"]
    plt.close("all")


@pytest.mark.parametrize(("role", "text", "needed"), [
    ("title", "Keys", True), ("legend", "scaled dot", True), ("text", "0.25", False),
    ("axis label", "$p_t$", False), ("axis label", r"$\sqrt{d_k}$ scaling", True),
    ("title", "x", False), ("title", "弟弟", False), ("tick", "cat", False),
    ("tick", "additive", False), ("tick", "head 3", True), ("text", "nan", False),
])
def test_which_strings_need_a_translation(role, text, needed):
    assert needs_translation(role, text) is needed


def test_a_rendering_is_current_while_the_catalogue_gives_its_translations():
    texts = [["title", "Keys", "键"], ["tick", "the", None]]
    metadata = {METADATA_KEY: {"zh_CN": {"image/png": "", "texts": texts, "version": VERSION}}}
    older = {METADATA_KEY: {"zh_CN": {"image/png": "", "texts": texts, "version": VERSION - 1}}}
    assert not is_current(older, {"zh_CN": {"Keys": "键"}})
    assert is_current(metadata, {"zh_CN": {"Keys": "键"}})
    assert not is_current(metadata, {"zh_CN": {"Keys": "关键"}})
    assert not is_current(metadata, {"zh_CN": {"Keys": "键", "the": "这"}})
    assert not is_current(metadata, {"zh_CN": {"Keys": "键"}, "fr": {}})
    assert not is_current({}, {"zh_CN": {}})
    assert is_current({}, {}), "without catalogues there is nothing to render"


def write_catalogue(locales, language: str, entries: dict[str, str]) -> None:
    folder = locales / language / "LC_MESSAGES"
    folder.mkdir(parents=True)
    catalogue = Catalog(locale=language)
    for source, translation in entries.items():
        catalogue.add(source, translation)
    catalogue.add("Untranslated", "")
    with (folder / "figures.po").open("wb") as f:
        write_po(f, catalogue)


def test_catalogues_hold_only_translated_entries(tmp_path):
    write_catalogue(tmp_path, "zh_CN", ZH)
    assert load_catalogues(tmp_path) == {"zh_CN": ZH}


def test_in_a_kernel_the_english_png_is_sharper_and_the_translation_is_in_its_metadata(
        tmp_path, monkeypatch):
    """A notebook executed as the book's build does (:mod:`book_build.execute`), and as a
    student does, without the extensions: the same English figure, drawn at twice the
    resolution and shown at the student's size, its translation drawn alike."""
    write_catalogue(tmp_path / "locales", "zh_CN", ZH)
    monkeypatch.setenv(LOCALES_VARIABLE, str(tmp_path / "locales"))
    from book_build.execute import KERNEL_ARGUMENTS

    code = ["import matplotlib.pyplot as plt\nimport numpy as np\n"
            "from attention_course.plotting import show_heatmaps\n"
            "fig = show_heatmaps(np.array([[0.5, 0.5], [0.1, 0.9]]), xlabels=['the', 'cat'],\n"
            "                    titles=['Attention weights'])",
            "plt.plot([1, 2], [3, 4], label='scaled dot'); plt.legend(); plt.show()"]

    def execute(arguments: list[str]) -> nbformat.NotebookNode:
        notebook = nbformat.v4.new_notebook()
        notebook.cells = [nbformat.v4.new_code_cell(source) for source in code]
        NotebookClient(notebook, timeout=120, kernel_name="python3",
                       extra_arguments=arguments).execute()
        return notebook

    built, plain = execute(KERNEL_ARGUMENTS), execute([])
    for built_cell, plain_cell in zip(built.cells, plain.cells, strict=True):
        [built_output], [plain_output] = built_cell.outputs, plain_cell.outputs
        assert METADATA_KEY not in plain_output.metadata.get("image/png", {})
        built, plain = (pixels(o.data["image/png"]) for o in (built_output, plain_output))
        shown = built_output.metadata["image/png"]["width"]
        assert abs(shown - plain.shape[1]) <= 1 and abs(built.shape[1] - 2 * shown) <= 1
        assert abs(built.shape[0] - 2 * plain.shape[0]) <= 2
        # the same picture: both seen from afar (an eighth of the student's size) agree
        size = (plain.shape[1] // 8, plain.shape[0] // 8)
        far = [np.asarray(Image.fromarray(a).convert("L").resize(size, Image.BOX), dtype=float)
               for a in (built, plain)]
        assert np.corrcoef(far[0].ravel(), far[1].ravel())[0, 1] > 0.9
        rendering = built_output.metadata["image/png"][METADATA_KEY]["zh_CN"]
        assert rendering["image/png"] != built_output.data["image/png"]
        assert pixels(rendering["image/png"]).shape == built.shape
        assert untranslated(rendering) == []


def test_an_attention_view_is_translated_in_its_menus_headings_and_title_only():
    from attention_course.attention_view import KEYBOARD_WORDS, attention_view, translate_view

    view = attention_view([["drei", "hundert"], ["three", "hundred"]], None,
                          [np.full((2, 3, 2, 2), 0.5)] * 2,
                          names=["324 (German)", "the cat"], title="Cross-attention",
                          source_title="source words", target_title="output tokens",
                          inline=False)
    html = view.to_html()
    catalogue = {"example": "例子", "layer": "层", "head": "头", "source words": "源语词",
                 "output tokens": "输出词元", "%1 (German)": "%1（德语）",
                 "Cross-attention": "交叉注意力"}
    translated, record = translate_view(html, lambda text: translate(text, catalogue))
    assert translate_view(html, lambda text: None)[0] == html
    spec = json.loads(re.search(r'class="attention-view-spec">(.*?)</script>', translated,
                                re.S).group(1))
    menus = {p["name"]: p["bind"] for p in spec["params"] if "bind" in p}
    assert [b["name"] for b in menus.values()] == ["例子 ", "层 ", "头 "]
    assert menus["example"]["labels"] == ["324（德语）", "the cat"]  # a sentence is data
    assert spec["title"]["text"] == "交叉注意力"
    assert spec["datasets"]["keys"][0]["t"] == "drei", "tokens are data"
    missing = [text for role, text, translation in record
               if translation is None and needs_translation(role, text)]
    # the keyboard's words (not in this catalogue) and the message without JavaScript
    assert sorted(missing) == sorted([*KEYBOARD_WORDS.values(), "The interactive attention "
                                      "view needs JavaScript; the figures show the same "
                                      "weights."])
    words = json.loads(re.search(r'class="attention-view-words">(.*?)</script>', translated,
                                 re.S).group(1))
    assert (words["queries"], words["keys"]) == ("输出词元", "源语词")   # the view's headings


def test_no_glyph_is_missing_from_a_translation_around_a_formula(caplog):
    """Mathtext draws the words around a formula in one font, without fallback."""
    fig, ax = plt.subplots(figsize=(4, 1))
    ax.set_title("One decoding step: the previous state $s_{i-1}$ scores every $h_j$")
    ax.set_xlabel("Keys")
    png(fig)
    translations = {"One decoding step: the previous state $s_{i-%1}$ scores every $h_j$":
                    "解码的一步：前一个状态 $s_{i-%1}$ 为每个 $h_j$ 打分", "Keys": "键"}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing" is a UserWarning
        rendering = render_translations(fig, png, {"zh_CN": translations}, cjk_family())
    assert untranslated(rendering["zh_CN"]) == []
    assert not [r for r in caplog.records if "does not have a glyph" in r.getMessage()]
    plt.close(fig)
