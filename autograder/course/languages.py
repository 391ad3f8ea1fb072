"""The languages a notebook of the course is released in, and how a notebook says its own.

An assignment's notebook ``<notebook>.ipynb`` is released in English; where the course has
a gettext catalogue of its markdown for a language (``locales/<lang>/LC_MESSAGES/
exercises/<assignment>/<notebook>.po``, the catalogue Sphinx extracts from the released
notebook for the book's pages), ``release`` also writes ``<notebook>.<lang>.ipynb`` beside
it (:mod:`autograder.course.translation`): the same notebook, its markdown translated, with
``"attention_course": {"language": "<lang>"}`` in its metadata. The English notebook
carries no such key: a notebook without one is English, as is any notebook written outside
the course. Either may be handed in; it is graded as ``<notebook>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

ENGLISH = "en"
TRANSLATIONS = ("zh_CN",)              # the languages notebooks are translated into
METADATA_KEY = "attention_course"      # notebook metadata: {"language": "<lang>"}
LOCALES_DIR = "locales"                # in the course directory, as Sphinx reads it


def translated_name(notebook: str, language: str) -> str:
    """The file stem of ``notebook`` translated into ``language``: ``A`` -> ``A.zh_CN``."""
    return f"{notebook}.{language}"


def split_name(stem: str) -> tuple[str, str]:
    """(notebook, language) of a released notebook's file stem: ``A.zh_CN`` ->
    ``("A", "zh_CN")``, ``A`` -> ``("A", "en")``."""
    for language in TRANSLATIONS:
        suffix = f".{language}"
        if stem.endswith(suffix) and len(stem) > len(suffix):
            return stem[:-len(suffix)], language
    return stem, ENGLISH


def notebook_language(notebook: Mapping) -> str:
    """The language a notebook declares in its metadata (English if it says nothing, or
    something this course does not know)."""
    declared = notebook.get("metadata", {}).get(METADATA_KEY, {})
    language = declared.get("language") if isinstance(declared, dict) else None
    return language if language in TRANSLATIONS else ENGLISH


def catalogue_path(root: Path, assignment: str, notebook: str, language: str) -> Path:
    """Where the course keeps the ``language`` catalogue of a released notebook's markdown."""
    return (root / LOCALES_DIR / language / "LC_MESSAGES" / "exercises" / assignment
            / f"{notebook}.po")
