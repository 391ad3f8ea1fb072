"""Draw a small graph with the aggregation weight of every edge written on it.

Used by the graph chapters: the same drawing shows equal weights (a graph convolution's
mean over neighbours) and attention weights, so the two can be compared side by side.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import matplotlib.pyplot as plt
import numpy as np
from matplotlib.axes import Axes
from matplotlib.patches import Circle

__all__ = ["draw_weighted_graph"]

_NODE_RADIUS = 0.24
_LABEL_AT = 0.33  # where a weight is written, as a fraction of the edge from its node


def _to_numpy(x: Any) -> np.ndarray:
    """Return ``x`` as a float NumPy array; torch tensors are detached first."""
    if hasattr(x, "detach"):
        x = x.detach().cpu().numpy()
    return np.asarray(x, dtype=float)


def _line_width(weight: float) -> float:
    """Line width (points) of a half edge: thin for weight 0, thickest from weight 1 on."""
    return 0.8 + 5 * min(abs(float(weight)), 1.0)


def _loop_angle(v: int, links: np.ndarray, pos: np.ndarray) -> float:
    """Direction (radians) of the widest gap between the edges at node ``v``."""
    angles = sorted(
        math.atan2(*(pos[u] - pos[v])[::-1]) for u in np.flatnonzero(links[v]) if u != v
    )
    if not angles:
        return math.pi / 2
    gaps = [(angles[(i + 1) % len(angles)] - a) % (2 * math.pi) or 2 * math.pi
            for i, a in enumerate(angles)]
    i = int(np.argmax(gaps))
    return angles[i] + gaps[i] / 2


def draw_weighted_graph(
    weights: Any,
    positions: Sequence[tuple[float, float]],
    labels: Sequence[str] | None = None,
    title: str | None = None,
    ax: Axes | None = None,
    *,
    fmt: str = ".2f",
    color: str = "tab:red",
    fontsize: float = 9.0,
) -> Axes:
    """Draw an undirected graph and, on each edge, the weights its two nodes give each other.

    ``weights[v, u]`` is the weight node ``v`` gives neighbour ``u`` when it aggregates
    (row ``v`` of an aggregation matrix). Nodes ``v`` and ``u`` are linked when
    ``weights[v, u]`` or ``weights[u, v]`` is non-zero. Each edge is drawn in two halves:
    the half next to node ``v`` is the thicker the larger ``weights[v, u]`` (up to 1), and
    carries that number, so every number sits next to the node that uses it. A non-zero
    diagonal entry ``weights[v, v]`` is drawn as a self-loop.

    Args:
        weights: Aggregation weights of shape ``(N, N)`` (NumPy array, tensor or nested
            list).
        positions: ``N`` pairs ``(x, y)``, where to draw each node.
        labels: ``N`` node labels written in the circles (default ``1 .. N``).
        title: Title of the axes.
        ax: Axes to draw on (default: a new figure of 3.6 by 3.4 inches).
        fmt: Format specification of the weights, e.g. ``".2f"``.
        color: Colour of the edges.
        fontsize: Font size of the node labels and the weights (the title is 1 point
            larger).

    Returns:
        The axes drawn on.
    """
    w = _to_numpy(weights)  # (N, N)
    pos = np.asarray(positions, dtype=float)  # (N, 2)
    n = w.shape[0]
    if w.shape != (n, n) or pos.shape != (n, 2):
        raise ValueError(f"need weights (N, N) and positions (N, 2), got {w.shape}, {pos.shape}")
    labels = [str(i + 1) for i in range(n)] if labels is None else list(labels)
    if ax is None:
        _, ax = plt.subplots(figsize=(3.6, 3.4), layout="constrained")
    links = (w != 0) | (w.T != 0)  # (N, N) bool, symmetric
    box = {"boxstyle": "round,pad=0.15", "facecolor": "white", "edgecolor": "none"}

    for v in range(n):
        for u in np.flatnonzero(links[v]):
            if u == v:
                continue
            mid = (pos[v] + pos[u]) / 2
            ax.plot(*zip(pos[v], mid, strict=True), color=color, alpha=0.8,
                    linewidth=_line_width(w[v, u]), solid_capstyle="butt", zorder=1)
            at = pos[v] + _LABEL_AT * (pos[u] - pos[v])
            ax.text(*at, format(w[v, u], fmt), ha="center", va="center",
                    fontsize=fontsize, bbox=box, zorder=3)
        if w[v, v] != 0:
            angle = _loop_angle(v, links, pos)
            direction = np.array([math.cos(angle), math.sin(angle)])
            centre = pos[v] + 1.7 * _NODE_RADIUS * direction
            ax.add_patch(Circle(centre, _NODE_RADIUS, fill=False, edgecolor=color, alpha=0.8,
                                linewidth=_line_width(w[v, v]), zorder=1))
            ax.text(*(pos[v] + 3.3 * _NODE_RADIUS * direction), format(w[v, v], fmt),
                    ha="center", va="center", fontsize=fontsize, bbox=box, zorder=3)

    for v in range(n):
        ax.add_patch(Circle(pos[v], _NODE_RADIUS, facecolor="#dbe9f6", edgecolor="black",
                            zorder=2))
        ax.text(*pos[v], labels[v], ha="center", va="center", fontsize=fontsize, zorder=3)

    # fit the axes to the nodes and to room for a self-loop at every node, so that drawings
    # with the same positions, with or without self-loops, share one scale
    extent = [pos - 1.5 * _NODE_RADIUS, pos + 1.5 * _NODE_RADIUS]
    for v in range(n):
        angle = _loop_angle(v, links, pos)
        direction = np.array([math.cos(angle), math.sin(angle)])
        outer = pos[v] + 3.3 * _NODE_RADIUS * direction
        extent += [outer[None] - [0.35, 0.15], outer[None] + [0.35, 0.15]]
    corners = np.concatenate(extent)  # (points, 2)
    ax.set_xlim(corners[:, 0].min(), corners[:, 0].max())
    ax.set_ylim(corners[:, 1].min(), corners[:, 1].max())
    ax.set_aspect("equal")
    ax.axis("off")
    if title:
        ax.set_title(title, fontsize=fontsize + 1)
    return ax
