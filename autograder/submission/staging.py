"""The submission staged for grading: its regular files, the release's other files, which
notebook file is graded as each of the assignment's notebooks, and which of them nbgrader
can read."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from ..course import Course
from ..course.languages import ENGLISH, TRANSLATIONS, notebook_language, translated_name


def readable_notebook(path: Path) -> str | None:
    """``None`` if ``path`` is a notebook nbgrader can grade, else why it is not."""
    if not path.exists():
        return f"{path.name} is missing from the submission"
    try:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
    except Exception as error:   # any unreadable notebook: bad JSON, wrong schema, not text
        first_line = str(error).strip().splitlines()[0] if str(error).strip() else ""
        return f"{path.name} is not a valid notebook ({type(error).__name__}: {first_line[:200]})"
    return None


def copy_regular_files(source: Path, target: Path) -> list[str]:
    """Copy the folders and regular files under ``source``; say what else was left out.

    A link, followed, could bring any file the grader can read (the solutions, the
    gradebook) into the sandbox's view, or write over one; a named pipe would block the
    copy. Neither is followed or copied.
    """
    left_out = []
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(source.rglob("*")):       # rglob does not enter linked folders
        relative = path.relative_to(source)
        if path.is_symlink() or not (path.is_dir() or path.is_file()):
            left_out.append(f"{relative} is not a regular file or folder and was left out")
        elif path.is_dir():
            (target / relative).mkdir(exist_ok=True)
        else:
            shutil.copyfile(path, target / relative, follow_symlinks=False)
    return left_out


def restore_released_files(course: Course, assignment: str, staged: Path) -> None:
    """Put the release's other files (data, helper modules) into the submission as released.

    What nbgrader does from the source folder, which the scratch course does not have: a
    notebook is graded with the course's files, whether the student handed them in or not,
    changed or not.
    """
    release = course.release / assignment
    for path in sorted(release.rglob("*")):
        if path.is_file() and path.suffix != ".ipynb" and ".ipynb_checkpoints" not in path.parts:
            target = staged / path.relative_to(release)
            target.parent.mkdir(parents=True, exist_ok=True)
            if target.is_dir():
                shutil.rmtree(target)
            shutil.copyfile(path, target)


def choose_notebooks(staged: Path, notebooks: list[str]) -> list[str]:
    """Make each translated notebook handed in the submission of its notebook; say what
    was left out.

    A student may hand in ``<notebook>.ipynb`` (the English release, or a translation
    downloaded under the English name) or ``<notebook>.<lang>.ipynb`` (a translation under
    its released name, as JupyterHub shows it): the notebook is graded from whichever was
    handed in, renamed ``<notebook>.ipynb``. When both were handed in, ``<notebook>.ipynb``
    is graded — the name the course asks for — and the other file is left out, with a
    reason. (When several translations and no English name are handed in, the first in
    :data:`~autograder.course.languages.TRANSLATIONS` order is graded.)
    """
    reasons = []
    for notebook in notebooks:
        graded = staged / f"{notebook}.ipynb"
        for language in TRANSLATIONS:
            translated = staged / f"{translated_name(notebook, language)}.ipynb"
            if not translated.is_file():
                continue
            if graded.exists():
                translated.unlink()
                reasons.append(f"{translated.name} was handed in as well as {graded.name}: "
                               f"{graded.name} was graded, {translated.name} was not")
            else:
                translated.rename(graded)
    return reasons


def submission_language(staged: Path, notebooks: list[str]) -> str:
    """The language of a staged submission: the first of its notebooks (in the
    assignment's order) that declares one other than English, else English."""
    for notebook in notebooks:
        try:
            language = notebook_language(nbformat.read(staged / f"{notebook}.ipynb",
                                                       as_version=4))
        except Exception:     # noqa: BLE001 - missing or unreadable: said elsewhere
            continue
        if language != ENGLISH:
            return language
    return ENGLISH
