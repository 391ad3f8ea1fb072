"""The course's languages, in one table, and how a notebook says its own.

:data:`LANGUAGES` is the one table of the languages the course is published in, English
first: the grader releases every assignment's notebook in each of the others (below), and
the book's build (``book_build``) makes a website in each, with a switch between them.

An assignment's notebook ``<notebook>.ipynb`` is released in English; where the course has
a gettext catalogue of its markdown for a language (``locales/<lang>/LC_MESSAGES/
exercises/<assignment>/<notebook>.po``, the catalogue Sphinx extracts from the released
notebook for the book's pages), ``release`` also writes ``<notebook>.<lang>.ipynb`` beside
it (:mod:`autograder.commands.translation`): the same notebook, its markdown translated, with
``"attention_course": {"language": "<lang>"}`` in its metadata. The English notebook
carries no such key: a notebook without one is English, as is any notebook written outside
the course. Either may be handed in; it is graded as ``<notebook>``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Language:
    """A language the course is published in."""

    code: str                 # as gettext and Sphinx name it: "en", "zh_CN"
    name: str                 # in itself, as the site's language switch shows it
    site_folder: str          # its website's folder from the English site's root ("": root)
    read_this_page: str       # the switch's title, in the language: "Read this page in …"
    output_figure: str        # alt text of a figure an output draws, without a section …
    output_figure_in: str     # … and with its section's ``{title}``
    contents: str             # the heading of the PDF's table of contents

    @property
    def tag(self) -> str:
        """The BCP 47 tag of HTML's ``lang`` and ``hreflang``: ``zh_CN`` -> ``zh-CN``."""
        return self.code.replace("_", "-")


LANGUAGES = (
    Language("en", "English", "", "Read this page in English",
             "Plot drawn by the code cell above",
             "Plot drawn by the code cell above (section “{title}”)", "Contents"),
    Language("zh_CN", "中文", "zh", "阅读本页的中文版",
             "上方代码单元格画出的图", "上方代码单元格画出的图（“{title}”一节）", "目录"),
)
ENGLISH = LANGUAGES[0].code
TRANSLATIONS = tuple(language.code for language in LANGUAGES[1:])   # what notebooks are
METADATA_KEY = "attention_course"      # notebook metadata: {"language": "<lang>"}
LOCALES_DIR = "locales"                # in the course directory, as Sphinx reads it


def language(code: str | None) -> Language:
    """The course's language ``code`` (English for None, or one it does not know)."""
    return next((known for known in LANGUAGES if known.code == code), LANGUAGES[0])


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
