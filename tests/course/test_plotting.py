"""show_heatmaps: shared tick labels, and one list of tick labels per panel."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pytest  # noqa: E402

from attention_course.plotting import show_heatmaps  # noqa: E402


def _labels(ax, axis):
    ticks = ax.get_xticklabels() if axis == "x" else ax.get_yticklabels()
    return [t.get_text() for t in ticks]


def test_shared_labels_go_under_the_bottom_row_only():
    fig = show_heatmaps(np.ones((2, 2, 3, 4)), xlabels=list("abcd"), ylabels=list("xyz"))
    axes = fig.axes[:4]
    assert _labels(axes[2], "x") == list("abcd")
    assert _labels(axes[0], "y") == list("xyz")
    plt.close(fig)


def test_each_panel_can_have_its_own_labels():
    panels = [np.ones((2, 3)), np.ones((1, 5))]
    fig = show_heatmaps(panels, xlabels=[list("abc"), list("vwxyz")],
                        ylabels=[["p", "q"], ["r"]], titles=["one", "two"])
    first, second = fig.axes[:2]
    assert _labels(first, "x") == list("abc") and _labels(second, "x") == list("vwxyz")
    assert _labels(first, "y") == ["p", "q"] and _labels(second, "y") == ["r"]
    plt.close(fig)


def test_per_panel_labels_must_match_the_panels():
    with pytest.raises(ValueError):
        show_heatmaps([np.ones((2, 3))], xlabels=[list("abc"), list("abc")])
    with pytest.raises(ValueError):
        show_heatmaps([np.ones((2, 3))], xlabels=[list("ab")])
    plt.close("all")
