"""Plotting helpers shared by every notebook of the course.

One function, :func:`show_heatmaps`, draws attention weights from the first toy example
to the last grid of multi-head weights, so every figure in the book reads the same way:
rows are queries, columns are keys, darker cells are larger weights.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.colors import Colormap
from matplotlib.figure import Figure

__all__ = ["show_heatmaps"]


def _to_numpy(x: Any) -> np.ndarray:
    """Return ``x`` as a float NumPy array; torch tensors are detached and moved to the CPU."""
    if hasattr(x, "detach"):  # a torch.Tensor, without importing torch here
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def _as_grid(matrices: Any) -> list[list[np.ndarray]]:
    """Arrange the accepted inputs of :func:`show_heatmaps` as rows of 2-D arrays."""
    if isinstance(matrices, (list, tuple)):
        if not matrices:
            raise ValueError("show_heatmaps needs at least one matrix")
        if isinstance(matrices[0], (list, tuple)):  # a nested sequence: rows of panels
            grid = [[_to_numpy(m) for m in row] for row in matrices]
        else:  # a flat sequence of 2-D matrices: one row of panels
            grid = [[_to_numpy(m) for m in matrices]]
    else:
        array = _to_numpy(matrices)
        if array.ndim == 2:  # (n_q, n_k)
            grid = [[array]]
        elif array.ndim == 3:  # (panels, n_q, n_k)
            grid = [list(array)]
        elif array.ndim == 4:  # (rows, cols, n_q, n_k)
            grid = [list(row) for row in array]
        else:
            raise ValueError(f"expected a 2-, 3- or 4-D array, got shape {array.shape}")
    ncols = len(grid[0])
    for row in grid:
        if len(row) != ncols:
            raise ValueError("every row of panels must hold the same number of matrices")
        for m in row:
            if m.ndim != 2:
                raise ValueError(f"every panel must be a 2-D matrix, got shape {m.shape}")
    return grid


def _per_panel_labels(
    labels: Sequence[Any] | None, n_panels: int, name: str
) -> list[list[str]] | None:
    """One list of tick labels per panel if ``labels`` holds a list per panel, else None."""
    if labels is None or len(labels) == 0 or isinstance(labels[0], str):
        return None
    if not isinstance(labels[0], (list, tuple)):
        return None
    flat: list[list[str]] = []
    for item in labels:
        if item and isinstance(item[0], (list, tuple)):  # rows of panels
            flat.extend([list(map(str, panel)) for panel in item])
        else:
            flat.append(list(map(str, item)))
    if len(flat) != n_panels:
        raise ValueError(f"got {name} for {len(flat)} panels, but there are {n_panels}")
    return flat


def _flatten_titles(titles: Sequence[Any] | None, n_panels: int) -> list[str | None]:
    """Return one title per panel in row-major order (a nested sequence is flattened)."""
    if titles is None:
        return [None] * n_panels
    flat: list[Any] = []
    for t in titles:
        flat.extend(t if isinstance(t, (list, tuple)) else [t])
    if len(flat) != n_panels:
        raise ValueError(f"got {len(flat)} titles for {n_panels} heatmaps")
    return [None if t is None else str(t) for t in flat]


# Default layout, in inches: the book's column shows 6.7 inches of a figure drawn at 100 dpi
# at its own size, so grids are shrunk (down to a smallest cell) to fit it and their text
# is not scaled down on the page.
_PAGE_WIDTH = 6.7
_CELL, _MIN_CELL = 0.42, 0.25
_PANEL_MARGIN_W, _PANEL_MARGIN_H, _COLORBAR_W = 0.7, 0.75, 0.9


def _default_figsize(grid: list[list[np.ndarray]], colorbar: bool) -> tuple[float, float]:
    """Size the figure from the largest matrix, fitting the page width where possible."""
    nrows, ncols = len(grid), len(grid[0])
    n_q = max(m.shape[0] for row in grid for m in row)
    n_k = max(m.shape[1] for row in grid for m in row)
    extra_w = ncols * _PANEL_MARGIN_W + (_COLORBAR_W if colorbar else 0.2)
    fitting = (_PAGE_WIDTH - extra_w) / (ncols * n_k)
    cell = float(np.clip(fitting, _MIN_CELL, _CELL))
    width = ncols * n_k * cell + extra_w
    height = nrows * (n_q * cell + _PANEL_MARGIN_H) + 0.2
    return width, height


def show_heatmaps(
    matrices: Any,
    xlabels: Sequence[str] | None = None,
    ylabels: Sequence[str] | None = None,
    titles: Sequence[Any] | None = None,
    cmap: str | Colormap = "Reds",
    *,
    xlabel: str | None = "Keys",
    ylabel: str | None = "Queries",
    annotate: bool = False,
    fmt: str = ".2f",
    vmin: float | None = None,
    vmax: float | None = None,
    colorbar: bool = True,
    figsize: tuple[float, float] | None = None,
    fontsize: float = 9.0,
) -> Figure:
    """Draw a grid of heatmaps (usually attention weights) that share one colour scale.

    Args:
        matrices: What to draw, as NumPy arrays, torch tensors or nested lists:

            - one matrix of shape ``(n_q, n_k)``: a single heatmap;
            - an array of shape ``(m, n_q, n_k)`` or a list of ``m`` matrices: one row of
              ``m`` heatmaps (matrices in a list may differ in shape);
            - an array of shape ``(r, c, n_q, n_k)`` or a list of ``r`` lists of ``c``
              matrices: an ``r`` by ``c`` grid, e.g. layers by heads.

            Row ``i``, column ``j`` of a matrix is the weight query ``i`` gives key ``j``.
            Torch tensors are converted with ``.detach().cpu().numpy()``; NaN cells are
            drawn in grey (and printed as ``nan`` when ``annotate`` is set).
        xlabels: Tick labels of the columns (keys): ``n_k`` strings shared by every panel
            (written under the bottom row), or one list of strings per panel, in row-major
            order like ``titles``, for panels whose keys differ (written under every panel).
        ylabels: Tick labels of the rows (queries): ``n_q`` strings shared by every panel
            (written left of the first column), or one list of strings per panel (written
            left of every panel).
        titles: One title per panel, in row-major order (a flat sequence of ``r * c``
            items, or ``r`` sequences of ``c`` items).
        cmap: A Matplotlib colormap or its name.
        xlabel: Axis title under the bottom row of panels (``None`` for none).
        ylabel: Axis title left of the first column of panels (``None`` for none).
        annotate: Print each cell's value in the cell, formatted with ``fmt``.
        fmt: Format specification for ``annotate``, e.g. ``".2f"`` or ``".0%"``.
        vmin: Value drawn with the lightest colour; default ``min(0, smallest value)``.
        vmax: Value drawn with the darkest colour; default the largest value.
        colorbar: Add one colourbar shared by all panels.
        figsize: Figure size in inches; by default it grows with the matrices and, where
            the cells can stay legible, fits the book's column (6.7 inches).
        fontsize: Font size of tick labels, titles and annotations.

    Returns:
        The Matplotlib figure. In a notebook it is shown when the cell ends; assign it
        (``fig = show_heatmaps(...)``) so that it is not displayed twice.
    """
    grid = _as_grid(matrices)
    labels = _Labels.of(grid, xlabels, ylabels, titles, xlabel, ylabel)
    scale = _Scale.of(grid, cmap, vmin, vmax)
    style = _Style(annotate, fmt, fontsize)
    fig, axes = plt.subplots(len(grid), len(grid[0]),
                             figsize=figsize or _default_figsize(grid, colorbar),
                             squeeze=False, layout="constrained")
    image = None
    for (r, c), ax in np.ndenumerate(axes):
        image = _draw_panel(ax, grid[r][c], r, c, labels, scale, style)
    if colorbar and image is not None:
        cbar = fig.colorbar(image, ax=axes.ravel().tolist(), shrink=0.8)
        cbar.ax.tick_params(labelsize=fontsize)
    return fig


@dataclass(frozen=True)
class _Labels:
    """What a grid's panels are labelled with: tick labels shared by the grid's edge or of
    each panel, axis titles, panel titles."""

    nrows: int
    ncols: int
    xlabels: Sequence[str] | None               # shared: under the bottom row
    ylabels: Sequence[str] | None               # shared: left of the first column
    panel_xlabels: list[list[str]] | None       # one list per panel (row-major), or None
    panel_ylabels: list[list[str]] | None
    titles: list[str | None]
    xlabel: str | None
    ylabel: str | None

    @classmethod
    def of(cls, grid: list[list[np.ndarray]], xlabels, ylabels, titles, xlabel, ylabel
           ) -> _Labels:
        nrows, ncols = len(grid), len(grid[0])
        panels = nrows * ncols
        flat_titles = _flatten_titles(titles, panels)
        return cls(nrows, ncols, xlabels, ylabels,
                   _per_panel_labels(xlabels, panels, "xlabels"),
                   _per_panel_labels(ylabels, panels, "ylabels"), flat_titles, xlabel, ylabel)

    def ticks(self, r: int, c: int) -> tuple[Sequence[str] | None, Sequence[str] | None]:
        """(column labels, row labels) written beside panel ``(r, c)``, if any."""
        index = r * self.ncols + c
        own_x = self.panel_xlabels[index] if self.panel_xlabels is not None \
            else (self.xlabels if r == self.nrows - 1 else None)
        own_y = self.panel_ylabels[index] if self.panel_ylabels is not None \
            else (self.ylabels if c == 0 else None)
        return own_x, own_y


@dataclass(frozen=True)
class _Scale:
    """The colour scale every panel shares."""

    vmin: float
    vmax: float
    colormap: Colormap

    @classmethod
    def of(cls, grid: list[list[np.ndarray]], cmap: str | Colormap, vmin: float | None,
           vmax: float | None) -> _Scale:
        values = np.concatenate([m.ravel() for row in grid for m in row])
        finite = values[np.isfinite(values)]
        if vmin is None:
            vmin = min(0.0, float(finite.min())) if finite.size else 0.0
        if vmax is None:
            vmax = float(finite.max()) if finite.size else vmin + 1.0
        if vmax <= vmin:  # a constant matrix: any non-empty range will do
            vmax = vmin + 1.0
        return cls(vmin, vmax, plt.get_cmap(cmap).with_extremes(bad="lightgrey"))


@dataclass(frozen=True)
class _Style:
    """How a panel's text is written: its cells' values (``annotate``) and the size."""

    annotate: bool
    fmt: str
    fontsize: float


def _draw_panel(ax, m: np.ndarray, r: int, c: int, labels: _Labels, scale: _Scale,
                style: _Style):
    """Draw matrix ``m`` (``n_q`` by ``n_k``) as panel ``(r, c)``; return its image."""
    image = ax.imshow(np.ma.masked_invalid(m), cmap=scale.colormap, vmin=scale.vmin,
                      vmax=scale.vmax, aspect="auto")
    _ticks(ax, m, r, c, labels, style.fontsize)
    if labels.xlabel and r == labels.nrows - 1:
        ax.set_xlabel(labels.xlabel, fontsize=style.fontsize)
    if labels.ylabel and c == 0:
        ax.set_ylabel(labels.ylabel, fontsize=style.fontsize)
    title = labels.titles[r * labels.ncols + c]
    if title:
        ax.set_title(title, fontsize=style.fontsize + 1)
    if style.annotate:
        _annotate(ax, m, scale, style)
    return image


def _ticks(ax, m: np.ndarray, r: int, c: int, labels: _Labels, fontsize: float) -> None:
    """The panel's ticks and their labels (a panel inside the grid shows none)."""
    n_q, n_k = m.shape
    index = r * labels.ncols + c
    own_x, own_y = labels.ticks(r, c)
    if labels.xlabels is not None or n_k <= 20:
        ax.set_xticks(range(n_k))
    if labels.ylabels is not None or n_q <= 20:
        ax.set_yticks(range(n_q))
    if own_x is not None:
        if len(own_x) != n_k:
            raise ValueError(f"panel {index} has {n_k} columns but {len(own_x)} xlabels")
        angle = _label_angle(ax, own_x, fontsize)
        ax.set_xticklabels(list(own_x), rotation=angle, ha="center" if angle == 0 else "right",
                           va="center" if angle == 90 else "top", rotation_mode="anchor",
                           fontsize=fontsize)
    elif r != labels.nrows - 1:
        ax.tick_params(labelbottom=False)
    if own_y is not None:
        if len(own_y) != n_q:
            raise ValueError(f"panel {index} has {n_q} rows but {len(own_y)} ylabels")
        ax.set_yticklabels(list(own_y), fontsize=fontsize)
    elif c != 0:
        ax.tick_params(labelleft=False)
    ax.tick_params(labelsize=fontsize)


def _text_ems(text: str) -> float:
    """About how wide ``text`` is, in multiples of the font size: a Chinese character is
    as wide as the font is high, a Latin letter or digit about 0.6 of that."""
    return sum(1.0 if unicodedata.east_asian_width(ch) in "WF" else 0.6 for ch in text)


def _label_angle(ax, labels: Sequence[Any], fontsize: float) -> int:
    """How far to turn a panel's column labels so that neighbouring labels never overlap:
    not at all when each fits the width of its column, 45 degrees when the columns leave
    room for slanted lines of text, else upright (90 degrees). Widths are estimated
    before the layout (:func:`_text_ems`)."""
    panel_points = ax.get_position().width * ax.figure.get_figwidth() * 72
    between = panel_points / max(len(labels), 1)    # points from one column to the next
    widest = fontsize * max((_text_ems(str(s)) for s in labels), default=0)
    if widest <= 0.85 * between:
        return 0
    return 45 if between >= 1.6 * fontsize else 90


def _annotate(ax, m: np.ndarray, scale: _Scale, style: _Style) -> None:
    """Each cell's value, written in it (white on dark cells)."""
    for (i, j), value in np.ndenumerate(m):
        dark = np.isfinite(value) and (value - scale.vmin) / (scale.vmax - scale.vmin) > 0.6
        ax.text(j, i, "nan" if np.isnan(value) else format(value, style.fmt), ha="center",
                va="center", color="white" if dark else "black",
                fontsize=style.fontsize)
