"""Text for a cell of a CSV file that people open in a spreadsheet.

A spreadsheet reads a cell that begins with ``=``, ``+``, ``-``, ``@``, a tab or a carriage
return as a formula (CSV or formula injection, OWASP): a student id, a name or an answer
that a student wrote could then compute, link or run a command on the grader's machine.
:func:`to_cell` writes such text with a leading apostrophe, which a spreadsheet shows as
text; numbers (``-1.5``) are written as they are. :func:`from_cell` reads a cell back
exactly as it was before (an apostrophe the text began with is doubled, so nothing is
ambiguous), so a sheet exported, filled in and imported names the same students.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
_TEXT = "'"


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip() == text


def to_cell(value: object) -> object:
    """``value`` as a CSV cell: text that a spreadsheet would take for a formula (or that
    begins with an apostrophe) is prefixed with ``'``; numbers and other text unchanged."""
    if not isinstance(value, str):
        return value
    if value.startswith(_TEXT) or (value.startswith(FORMULA_STARTS) and not _is_number(value)):
        return _TEXT + value
    return value


def from_cell(text: str) -> str:
    """The text :func:`to_cell` wrote ``text`` for."""
    return text[1:] if text.startswith(_TEXT) else text
