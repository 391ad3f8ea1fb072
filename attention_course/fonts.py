"""A font with Chinese glyphs for Matplotlib, without installing anything system-wide.

Matplotlib's default font, DejaVu Sans, has no Chinese characters: a label such as 弟弟
is drawn as empty boxes, with a "Glyph missing" warning. :func:`use_cjk_font` finds a
font that has them and appends it to Matplotlib's ``font.family``, *after* the usual
DejaVu Sans, so Latin text looks as before and Matplotlib falls back to the new font for
the characters DejaVu Sans lacks.

The font comes from the PyPI package ``paperang-p2-fonts-cjk`` (pinned in
``requirements.txt``), which ships WenQuanYi Micro Hei as a file; the font is registered
with Matplotlib's font manager from that file. Failing that, a CJK font already known to
Matplotlib (for example one installed by the system) is used.
"""

from __future__ import annotations

import importlib.util
import logging
from pathlib import Path

import matplotlib as mpl
from matplotlib import font_manager

__all__ = ["CJK_FAMILIES", "cjk_family", "cjk_font_file", "use_cjk_font"]

CJK_FAMILIES = (
    "WenQuanYi Micro Hei",
    "WenQuanYi Zen Hei",
    "Noto Sans CJK SC",
    "Noto Sans SC",
    "Source Han Sans SC",
    "SimHei",
)
"""Families with simplified Chinese glyphs that :func:`use_cjk_font` accepts."""


def cjk_font_file() -> Path | None:
    """The font file shipped by ``paperang-p2-fonts-cjk``, or None if it is not installed."""
    spec = importlib.util.find_spec("paperang_p2_fonts_cjk")
    if spec is None or spec.origin is None:
        return None
    path = Path(spec.origin).parent / "fonts" / "wqy-microhei.ttc"
    return path if path.is_file() else None


class _OneWeightFamilies(logging.Filter):
    """Drops Matplotlib's warning that a CJK family has no bold (or light) face.

    These families have one weight. Matplotlib then draws the Chinese characters of a bold
    label in the regular weight, which is what we want, but it logs a warning for every such
    label (``findfont: Failed to find font weight bold for WenQuanYi Micro Hei``), which a
    notebook prints into its page. Other font warnings pass.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        return not (str(record.msg).startswith("findfont: Failed to find font weight")
                    and isinstance(record.args, tuple) and len(record.args) > 1
                    and record.args[1] in CJK_FAMILIES)


_ONE_WEIGHT = _OneWeightFamilies()


def cjk_family() -> str | None:
    """The first family of :data:`CJK_FAMILIES` Matplotlib knows, or None.

    Registers the packaged font (see :func:`cjk_font_file`) with the font manager, but
    leaves ``rcParams`` as they are: texts drawn so far and from now on keep their fonts.
    Matplotlib's warning that such a family has no bold face is silenced (see
    :class:`_OneWeightFamilies`).
    """
    logging.getLogger("matplotlib.font_manager").addFilter(_ONE_WEIGHT)
    path = cjk_font_file()
    if path is not None:
        font_manager.fontManager.addfont(str(path))
    known = {entry.name for entry in font_manager.fontManager.ttflist}
    return next((name for name in CJK_FAMILIES if name in known), None)


def use_cjk_font() -> str | None:
    """Make Matplotlib able to draw Chinese characters, if a suitable font exists.

    Registers the packaged font (see :func:`cjk_font_file`) and appends the first
    available family of :data:`CJK_FAMILIES` to ``font.family``, as the font to fall back
    on; the change lasts for the running Python session. Calling it again does no harm.

    Returns:
        The family name used, or None if no font with Chinese glyphs was found (then
        nothing is changed, and labels should avoid Chinese characters).
    """
    family = cjk_family()
    if family is None:
        return None
    # Matplotlib falls back from one entry of font.family to the next for a missing
    # glyph; a generic entry such as "sans-serif" counts as its first installed font.
    families = [name for name in mpl.rcParams["font.family"] if name != family]
    mpl.rcParams["font.family"] = [*families, family]
    return family
