"""Scores as the LMSs read them: full precision, no trailing zeros, the file's decimal mark."""

from __future__ import annotations


def score_text(value: float, decimal: str = ".") -> str:
    """``7.25`` -> ``"7.25"``, ``6.0`` -> ``"6"``, ``6.3000000000000001`` -> ``"6.3"``: the
    shortest text that reads back as the score to 12 significant digits."""
    text = f"{value:.12g}"
    if "e" in text:
        text = f"{value:.12f}".rstrip("0").rstrip(".")
    return text.replace(".", decimal)
