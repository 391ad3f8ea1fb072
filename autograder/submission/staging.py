"""The submission staged for grading: its regular files, the release's other files, and
which of its notebooks nbgrader can read."""

from __future__ import annotations

import shutil
from pathlib import Path

import nbformat

from ..course import Course


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
