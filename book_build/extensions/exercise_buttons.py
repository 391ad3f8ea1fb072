"""Sphinx extension: the download buttons of the exercise pages.

**Download the folder** (``.zip``): the exercise's notebook with the files released beside
it (``seq2seq-attention`` imports its ``seq2seq_data.py``), written next to the page as
``exercises/<assignment>/<assignment>.zip``. The ``.ipynb`` alone stays downloadable too.
(Launch buttons are sphinx-book-theme's, where the course has set a service to launch on:
see :mod:`book_build.extensions.launch_buttons`.)

**In a translated site** the downloads are the exercise in that language: the release
holds ``<a>.<language>.ipynb`` beside ``<a>.ipynb`` (the same notebook, its markdown
translated: ``python -m autograder release``), and the translated site offers it under the
English notebook's name, ``<a>.ipynb`` (what the grader expects), in the ``.zip`` and as
the page's ``.ipynb`` download. The English site's ``.zip`` leaves the translations out.
"""

from __future__ import annotations

import shutil
import zipfile
from pathlib import Path

from sphinx.application import Sphinx

from autograder.course.languages import ENGLISH, split_name, translated_name

from .download_buttons import add_download
from .interface_words import words

EXERCISES = "exercises/"
SKIPPED = {".ipynb_checkpoints", "__pycache__"}


def exercise_folder(pagename: str) -> str | None:
    """``exercises/<a>/<a>`` -> ``exercises/<a>``; None for any other page."""
    parts = pagename.split("/")
    if len(parts) == 3 and parts[0] + "/" == EXERCISES and parts[1] == parts[2]:
        return f"{parts[0]}/{parts[1]}"
    return None


def header_buttons(app: Sphinx, pagename: str, templatename: str, context: dict,
                   doctree) -> None:
    if exercise_folder(pagename) is not None:
        add_download(context, pagename, ".zip",
                     str(words("Download the exercise's folder (the notebook and its files)")),
                     "fas fa-file-zipper", "download-folder-button")


def released_files(source: Path, language: str | None) -> dict[str, Path]:
    """The files of an exercise's folder as a student of ``language`` downloads them:
    name in the folder -> file of the release."""
    name = source.name
    files = {}
    for path in sorted(source.rglob("*")):
        relative = path.relative_to(source)
        if not path.is_file() or SKIPPED & set(relative.parts):
            continue
        # ``attention-pooling.zh_CN.ipynb``, ``multi-head-attention.zh_CN.svg``: a file's
        # translation (the Chinese notebook links the Chinese diagram by that name)
        file_language = split_name(path.stem)[1]
        translated = file_language != ENGLISH
        if translated and file_language != language:
            continue   # another language's (the English site: every translation)
        if path.suffix == ".ipynb" and (translated or relative.as_posix() == f"{name}.ipynb"):
            continue   # the notebook, in the site's language, is added below
        files[relative.as_posix()] = path
    files[f"{name}.ipynb"] = notebook_for(source, language)
    return dict(sorted(files.items()))


def notebook_for(source: Path, language: str | None) -> Path:
    """The exercise's notebook in ``language`` (English for None or "en")."""
    if not language or language == ENGLISH:
        return source / f"{source.name}.ipynb"
    translated = source / f"{translated_name(source.name, language)}.ipynb"
    if not translated.is_file():
        raise FileNotFoundError(f"{translated} is missing: `python -m autograder release` "
                                "writes every exercise's translated notebooks")
    return translated


def write_folders(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.name != "html":   # the site's, not the PDF's
        return
    language = app.config.language
    for pagename in sorted(app.env.found_docs):
        folder = exercise_folder(pagename)
        if folder is None:
            continue
        source = Path(app.srcdir) / folder
        name = source.name
        with zipfile.ZipFile(Path(app.outdir) / f"{pagename}.zip", "w",
                             zipfile.ZIP_DEFLATED) as archive:
            for relative, path in released_files(source, language).items():
                archive.write(path, f"{name}/{relative}")
        # The page's own ".ipynb" download (sphinx-book-theme's) is its source, copied here.
        shutil.copyfile(notebook_for(source, language),
                        Path(app.outdir) / "_sources" / f"{pagename}.ipynb")


def setup(app: Sphinx) -> dict:
    # sphinx-book-theme adds its buttons at priority 501; this runs after it.
    app.connect("html-page-context", header_buttons, priority=502)
    app.connect("build-finished", write_folders)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
