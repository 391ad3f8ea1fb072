"""Chinese labels in Matplotlib figures: a font is found and no glyph is missing."""

from __future__ import annotations

import warnings

import matplotlib

matplotlib.use("Agg")

import matplotlib as mpl  # noqa: E402
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course.fonts import cjk_font_file, use_cjk_font  # noqa: E402
from attention_course.plotting import show_heatmaps  # noqa: E402


@pytest.fixture
def restore_rcparams():
    with mpl.rc_context():
        yield


def test_no_glyph_is_missing_from_a_chinese_heatmap(restore_rcparams):
    if cjk_font_file() is None:
        pytest.skip("paperang-p2-fonts-cjk is not installed")
    family = use_cjk_font()
    assert family == "WenQuanYi Micro Hei"
    assert use_cjk_font() == family  # a second call changes nothing
    assert list(mpl.rcParams["font.family"]).count(family) == 1
    words = ["我", "弟弟", "准备", "一切", "用品"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # "Glyph ... missing" is a UserWarning
        fig = show_heatmaps(np.full((5, 5), 0.2), xlabels=words, ylabels=words,
                            titles=["自注意力 self-attention"])
        fig.canvas.draw()
    plt.close(fig)


def test_a_bold_chinese_label_prints_no_font_warning(restore_rcparams, caplog):
    """The CJK font has one weight: a bold label is drawn regular, without the warning
    Matplotlib logs for it, which a notebook would print into its page."""
    if cjk_font_file() is None:
        pytest.skip("paperang-p2-fonts-cjk is not installed")
    use_cjk_font()
    caplog.set_level("DEBUG", logger="matplotlib.font_manager")
    fig, ax = plt.subplots()
    ax.set_title("弟弟 bold", fontweight="bold")
    ax.set_xlabel("一切 light", fontweight="light")
    fig.canvas.draw()
    plt.close(fig)
    assert not [r for r in caplog.records
                if r.levelname == "WARNING" and "Failed to find font weight" in r.getMessage()]
