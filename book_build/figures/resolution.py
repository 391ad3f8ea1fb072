"""Sharp figures: every figure of the book drawn at twice its resolution, shown at its size.

The inline backend draws a figure at Matplotlib's ``figure.dpi`` (100 dots per inch here):
a 7.5-inch page-wide figure is 750 pixels, blurry on a high-density screen and unreadable
once enlarged. While the book's notebooks execute, this IPython extension (loaded with
:mod:`book_build.figures.translation`, after it, by :mod:`book_build.execute`) makes every
PNG :data:`SCALE` times as many pixels across, and writes in the output's metadata the
``width`` it is shown at: the width it had before; and the smallest size at which its texts
are shown (:mod:`book_build.figures.legibility`). MyST-NB gives the image that width, and
Sphinx, seeing an image shown smaller than it is, links it to its full-size file: a reader
opens any figure full size by clicking it. The translated renderings are drawn by the same
call, at the same resolution.

Students' notebooks never load it: their figures are Matplotlib's defaults.
"""

from __future__ import annotations

import base64
import functools
import struct
from typing import Any

from . import legibility
from .translation import METADATA_KEY as TRANSLATIONS

SCALE = 2
"""Pixels of the PNG per pixel of the figure on the page."""


def png_width(data: bytes | str) -> int:
    """The width in pixels of a PNG (raw bytes, or base64 as the inline backend gives it)."""
    raw = base64.b64decode(data[:64]) if isinstance(data, str) else data[:24]
    if raw[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    return struct.unpack(">I", raw[16:20])[0]


def shown_width(data: bytes | str) -> int:
    """The width in pixels a PNG drawn by this extension is shown at on the page."""
    return round(png_width(data) / SCALE)


def is_current(metadata: dict) -> bool:
    """Whether an output's ``image/png`` metadata says it was drawn by this extension, with
    the size of its smallest text measured."""
    return isinstance(metadata.get("width"), int) and legibility.METADATA_KEY in metadata


def load_ipython_extension(ipython: Any) -> None:
    """Draw every PNG of a Matplotlib figure at :data:`SCALE` times its DPI, with its shown
    ``width`` in the metadata. Loading the extension twice does nothing more."""
    from IPython.core import pylabtools
    from matplotlib.figure import Figure

    if getattr(pylabtools.print_figure, "draws_sharp", False):
        return
    inner = pylabtools.print_figure

    @functools.wraps(inner)
    def print_figure(fig: Figure, fmt: str = "png", *args: Any, **kwargs: Any) -> Any:
        if fmt != "png":
            return inner(fig, fmt, *args, **kwargs)
        kwargs.setdefault("dpi", fig.dpi * SCALE)
        with legibility.drawn_text_sizes() as sizes:
            result = inner(fig, fmt, *args, **kwargs)
        data, metadata = result if isinstance(result, tuple) else (result, {})
        if data is None:
            return result
        width = shown_width(data)
        # the widest rendering (a translated text can widen the figure) is scaled down most
        widest = max([width] + [shown_width(rendering["image/png"])
                                for rendering in metadata.get(TRANSLATIONS, {}).values()])
        smallest = min((legibility.shown_points(size, fig.dpi, widest) for size in sizes),
                       default=None)
        return data, {**metadata, "width": width,
                      legibility.METADATA_KEY: None if smallest is None else round(smallest, 2)}

    print_figure.draws_sharp = True  # type: ignore[attr-defined]
    pylabtools.print_figure = print_figure
    # if the inline backend is active already, register the new function in its place
    png = ipython.display_formatter.formatters["image/png"]
    if Figure in png.type_printers:
        png.for_type(Figure, functools.partial(print_figure, fmt="png", base64=True))
