"""book_build.extensions.figure_alt: an output's figure without alt text says what it is."""

from __future__ import annotations

import re

import pytest

from .conftest import notebook, png_output

EXTENSIONS = ["myst_nb", "book_build.extensions.figure_alt"]


def _alt(page: str) -> list[str]:
    return re.findall(r'<img[^>]*alt="([^"]*)"', page)


@pytest.mark.parametrize("language, expected", [
    ("en", "Plot drawn by the code cell above (section “Scores sqrt(d_k)”)"),
    ("zh_CN", "上方代码单元格画出的图（“Scores sqrt(d_k)”一节）"),
])
def test_a_figure_without_alt_text_says_where_it_was_drawn(build, language, expected):
    built = build({"index.ipynb": notebook("Scores $\\sqrt{d_k}$", [png_output()])},
                  EXTENSIONS, nb_execution_mode="off", language=language,
                  myst_enable_extensions=["dollarmath"])
    assert built.error is None, built.warnings
    assert _alt(built.page("index")) == [expected]


def test_alt_text_written_in_the_cells_metadata_is_kept(build):
    page = notebook("Scores", [png_output()],
                    cell_metadata={"mystnb": {"image": {"alt": "Heatmap of the weights"}}})
    built = build({"index.ipynb": page}, EXTENSIONS, nb_execution_mode="off")
    assert built.error is None, built.warnings
    assert _alt(built.page("index")) == ["Heatmap of the weights"]
