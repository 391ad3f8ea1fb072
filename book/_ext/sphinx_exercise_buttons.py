"""Sphinx extension: the download buttons of the exercise pages.

**Download the folder** (``.zip``): the exercise's notebook with the files released beside
it (``seq2seq-attention`` imports its ``seq2seq_data.py``), written next to the page as
``exercises/<assignment>/<assignment>.zip``. The ``.ipynb`` alone stays downloadable too.
(Launch buttons are sphinx-book-theme's, where the course has set a service to launch on:
see :mod:`attention_course.sphinx_launch_buttons`.)
"""

from __future__ import annotations

import zipfile
from pathlib import Path

from sphinx.application import Sphinx

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
    buttons = context.get("header_buttons")
    if buttons is None:
        return
    if exercise_folder(pagename) is None:
        return
    for group in buttons:
        if group.get("label") == "download-buttons":
            group["buttons"].insert(0, {
                "type": "link",
                "url": context["pathto"](f"{pagename}.zip", 1),
                "text": ".zip",
                "tooltip": "Download the exercise's folder (the notebook and its files)",
                "icon": "fas fa-file-zipper",
                "label": "download-folder-button",
            })


def write_folders(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    for pagename in sorted(app.env.found_docs):
        folder = exercise_folder(pagename)
        if folder is None:
            continue
        source = Path(app.srcdir) / folder
        name = source.name
        with zipfile.ZipFile(Path(app.outdir) / f"{pagename}.zip", "w",
                             zipfile.ZIP_DEFLATED) as archive:
            for path in sorted(source.rglob("*")):
                relative = path.relative_to(source)
                if path.is_file() and not SKIPPED & set(relative.parts):
                    archive.write(path, f"{name}/{relative.as_posix()}")


def setup(app: Sphinx) -> dict:
    # sphinx-book-theme adds its buttons at priority 501; this runs after it.
    app.connect("html-page-context", header_buttons, priority=502)
    app.connect("build-finished", write_folders)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
