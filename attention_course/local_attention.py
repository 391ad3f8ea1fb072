"""Local attention of Luong et al. (2015): the local-m and local-p variants.

Global attention scores every source position at every target step. Local attention first
chooses an *aligned position* ``p_t`` and lets the weights fall only on the window
``[p_t - w, p_t + w]`` of source positions around it (Luong et al. call the
half-width ``D``):

- **local-m** (monotonic) takes ``p_t = t``: target step ``t`` looks around source
  position ``t`` (:func:`monotonic_positions`);
- **local-p** (predictive) predicts ``p_t`` from the decoder state ``h_t``
  (:func:`predict_position`) and multiplies the windowed softmax by a Gaussian centred on
  ``p_t`` with standard deviation ``w / 2`` (:func:`local_attention_weights`).

Positions are numbered from 0, as in Python: a source sentence of length ``S`` has
positions ``0 .. S - 1``. :func:`draw_windows` draws the windows on a heatmap made by
:func:`attention_course.plotting.show_heatmaps`.
"""

from __future__ import annotations

import torch
from matplotlib.axes import Axes
from matplotlib.patches import Rectangle

__all__ = [
    "draw_windows",
    "local_attention_weights",
    "monotonic_positions",
    "predict_position",
    "window_mask",
]


def predict_position(
    h: torch.Tensor, W_p: torch.Tensor, v_p: torch.Tensor, length: int | torch.Tensor
) -> torch.Tensor:
    """The aligned position of local-p, ``p_t = (S - 1) * sigmoid(v_p . tanh(W_p h_t))``.

    Luong et al. write ``S * sigmoid(...)`` for positions numbered ``1 .. S``; with
    positions numbered ``0 .. S - 1`` the factor ``S - 1`` keeps ``p_t`` inside the
    sentence. The sigmoid lies in ``(0, 1)``, so ``p_t`` is a real number between the
    first and the last position, and it is differentiable in ``W_p`` and ``v_p``.

    Args:
        h: Decoder states of shape ``(..., d)``, e.g. ``(B, T, d)``.
        W_p: Weight matrix of shape ``(d_p, d)``.
        v_p: Weight vector of shape ``(d_p,)``.
        length: Source length ``S``, an int or a tensor that broadcasts against
            ``h.shape[:-1]`` (e.g. ``(B, 1)`` for one length per sentence).

    Returns:
        The positions ``p_t``, of shape ``h.shape[:-1]``.
    """
    hidden = torch.tanh(h @ W_p.T)  # (..., d_p)
    return (length - 1) * torch.sigmoid(hidden @ v_p)  # (...,)


def monotonic_positions(target_length: int, source_length: int) -> torch.Tensor:
    """The aligned positions of local-m, ``p_t = t`` for ``t = 0 .. T - 1``.

    Args:
        target_length: Number of target steps ``T``.
        source_length: Source length ``S``; positions past the end are clipped to
            ``S - 1``, so that every window holds at least one source position.

    Returns:
        Float tensor of shape ``(T,)``.
    """
    steps = torch.arange(target_length, dtype=torch.float32)  # (T,)
    return steps.clamp(max=source_length - 1)


def window_mask(
    centres: torch.Tensor, source_length: int, half_width: int
) -> torch.Tensor:
    """Which source positions lie in the window ``[p_t - w, p_t + w]``.

    Args:
        centres: Aligned positions ``p_t`` (real numbers) of any shape ``(...)``.
        source_length: Source length ``S``.
        half_width: Half-width ``w`` of the window.

    Returns:
        Boolean tensor of shape ``(..., S)``: entry ``s`` is true when
        ``|s - p_t| <= w``. Positions outside ``0 .. S - 1`` do not exist, so windows
        near the ends of the sentence are cut.
    """
    positions = torch.arange(source_length, dtype=centres.dtype)  # (S,)
    distance = (positions - centres.unsqueeze(-1)).abs()  # (..., S)
    return distance <= half_width


def local_attention_weights(
    scores: torch.Tensor,
    centres: torch.Tensor,
    half_width: int,
    gaussian: bool = True,
) -> torch.Tensor:
    """Local attention weights: a softmax inside the window, times a Gaussian.

    For every target step ``t`` the scores of the positions in the window
    ``[p_t - w, p_t + w]`` go through a softmax; positions outside get weight 0. With
    ``gaussian=True`` (local-p) each weight is then multiplied by
    ``exp(-(s - p_t)**2 / (2 sigma**2))`` with ``sigma = w / 2``, as in Luong et al.,
    equation (10). The product is *not* renormalised, so a row sums to at most 1.
    A row whose window holds no position gets zero weights, never NaN.

    Args:
        scores: Alignment scores of shape ``(..., S)``, e.g. ``(B, T, S)``.
        centres: Aligned positions ``p_t`` of shape ``(...)``, e.g. ``(B, T)``.
        half_width: Half-width ``w`` of the window.
        gaussian: Multiply by the Gaussian (local-p); ``False`` gives local-m's plain
            softmax over the window.

    Returns:
        Weights of shape ``(..., S)``.
    """
    source_length = scores.shape[-1]
    inside = window_mask(centres, source_length, half_width)  # (..., S)
    masked = scores.masked_fill(~inside, float("-inf"))  # (..., S)
    weights = torch.softmax(masked, dim=-1)  # (..., S); NaN if no position
    weights = torch.nan_to_num(weights, nan=0.0)
    if gaussian:
        sigma = half_width / 2
        positions = torch.arange(source_length, dtype=scores.dtype)  # (S,)
        offset = positions - centres.unsqueeze(-1)  # (..., S)
        weights = weights * torch.exp(-offset**2 / (2 * sigma**2))
    return weights


def draw_windows(
    ax: Axes,
    centres: torch.Tensor,
    half_width: int,
    source_length: int,
    *,
    color: str = "tab:blue",
    label_centre: bool = True,
) -> None:
    """Outline each row's window, and mark ``p_t``, on a (target x source) heatmap.

    Row ``t`` of the heatmap is target step ``t`` and column ``s`` source position ``s``
    (as drawn by :func:`attention_course.plotting.show_heatmaps`). For every row the
    cells inside ``[p_t - w, p_t + w]`` are outlined and ``p_t`` is drawn as a dot.

    Args:
        ax: The heatmap's axes.
        centres: Aligned positions ``p_t`` of shape ``(T,)``.
        half_width: Half-width ``w`` of the window.
        source_length: Source length ``S`` (number of columns).
        color: Colour of the outlines and dots.
        label_centre: Add a legend entry for the dots.
    """
    centres = centres.detach().cpu().float()  # (T,)
    inside = window_mask(centres, source_length, half_width)  # (T, S)
    for t, row in enumerate(inside):
        columns = torch.nonzero(row).flatten()
        if len(columns) == 0:
            continue
        first, last = columns.min().item(), columns.max().item()
        ax.add_patch(Rectangle((first - 0.5, t - 0.5), last - first + 1, 1,
                               fill=False, edgecolor=color, linewidth=1.2))
    steps = torch.arange(len(centres))
    ax.plot(centres.numpy(), steps.numpy(), "o", color=color, markersize=3,
            label="window centre $p_t$" if label_centre else None)
