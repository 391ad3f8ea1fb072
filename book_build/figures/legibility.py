"""Labels a reader can read: how large each figure's smallest text is shown on the page.

A Matplotlib figure is drawn at ``figure.dpi`` pixels per inch and shown at that size,
unless it is wider than the article's column, which then scales it down (and a phone
scales everything down: there the reader zooms). Its labels are read on a desktop, so the
book measures them there: a text of ``p`` points on a figure ``w`` pixels wide (its widest
rendering, of all its languages) is shown at least at

    p · dpi / 72 · min(1, COLUMN_PIXELS / w) · 3/4   CSS points

(a CSS point is 4/3 of a CSS pixel). :mod:`book_build.figures.resolution` records, with
every figure it draws, the smallest shown size of the texts Matplotlib drew in it (every
language of the figure); ``tests/book/test_book.py`` holds each at least
:data:`SMALLEST_POINTS`, and ``tests/book/test_browser.py`` measures the column.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

COLUMN_PIXELS = 666
"""The narrowest width, in CSS pixels, a chapter's figure can be shown at on a desktop 1280
pixels wide: the column's inside a folded cell (688 in the column itself). The browser
tests measure every figure's room on every page of both sites."""

SMALLEST_POINTS = 9.0
"""The smallest size, in CSS points, at which a figure's text may be shown in the column."""

METADATA_KEY = "smallest_text_pt"
"""The key of a PNG output's metadata that holds the smallest shown size of its texts."""


def shown_points(points: float, dpi: float, width: int) -> float:
    """The size in CSS points at which a text of ``points`` points is shown on the page, on
    a figure drawn at ``dpi`` and ``width`` pixels wide at that resolution."""
    return points * dpi / 72 * min(1.0, COLUMN_PIXELS / width) * 0.75


@contextlib.contextmanager
def drawn_text_sizes() -> Iterator[list[float]]:
    """While the block runs, the font size in points of every non-empty text Matplotlib
    draws (titles, labels, tick labels, legends, annotations), appended to the list it
    yields."""
    from matplotlib.text import Text

    sizes: list[float] = []
    original = Text.draw

    def draw(self: Text, renderer: object) -> None:
        if self.get_visible() and self.get_text().strip():
            sizes.append(float(self.get_fontsize()))
        return original(self, renderer)

    Text.draw = draw  # type: ignore[method-assign]
    try:
        yield sizes
    finally:
        Text.draw = original  # type: ignore[method-assign]
