"""`collect`: a folder or .zip of submissions -> ``submitted/<student>/<assignment>/``.

Three layouts are recognised, as learning-management systems (LMS) download them:

* ``<student>/<assignment>/<notebook>.ipynb`` — nbgrader's own layout;
* ``<student>/<notebook>.ipynb`` — a folder per student. Moodle names these folders
  ``<Full Name>_<number>_assignsubmission_file_``: the student id is then the name, lower
  case, with hyphens (``jane-doe``);
* ``<student>_<anything>_<notebook>.ipynb`` — flat files, as Canvas names them
  (``doejane_LATE_12345_67890_attention-scoring-1.ipynb``): the student id is the text before
  the first underscore; a resubmission's ``-1``, ``-2`` … suffix is dropped and the highest
  one wins.

A notebook may be handed in under its English name or under the name of a translation the
release holds (``<notebook>.zh_CN.ipynb``): it is copied under the name it was handed in
with, and grading decides which file is graded (see
:func:`autograder.submission.staging.choose_notebooks`). A collected notebook replaces
the copies of the same notebook, in any language, that an earlier collection left.
"""

from __future__ import annotations

import re
import shutil
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from ..course import Course
from ..course.languages import TRANSLATIONS, split_name, translated_name

_MOODLE_FOLDER = re.compile(r"^(?P<name>.+?)_\d+_assignsubmission_\w*$")
_RESUBMISSION = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)$")
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class CollectError(ValueError):
    """The input cannot be collected (not found, not a zip or folder, unsafe archive)."""


@dataclass(frozen=True)
class Collected:
    student: str
    assignment: str
    source: str        # where the submission came from, relative to the input


def student_id(raw: str) -> str:
    """A safe student id from a folder or file-name fragment."""
    moodle = _MOODLE_FOLDER.match(raw)
    if moodle:
        raw = moodle.group("name").lower().replace(" ", "-")
    cleaned = _UNSAFE.sub("-", raw).strip("-.")
    if not cleaned:
        raise CollectError(f"no student id in {raw!r}")
    return cleaned


def _extract(archive: Path, target: Path) -> None:
    """Unzip, refusing members that would land outside ``target`` (zip-slip)."""
    try:
        with zipfile.ZipFile(archive) as zf:
            for member in zf.infolist():
                destination = (target / member.filename).resolve()
                if not destination.is_relative_to(target.resolve()):
                    raise CollectError(f"unsafe path in {archive.name}: {member.filename}")
            zf.extractall(target)
    except zipfile.BadZipFile as error:
        raise CollectError(f"{archive} is not a valid zip file") from error


def _notebook_match(filename: str, notebooks: dict[str, str]) -> tuple[str, str, int] | None:
    """(assignment, notebook, resubmission number) if ``filename`` ends with a notebook name."""
    stem = filename[:-len(".ipynb")]
    number = 0
    resubmission = _RESUBMISSION.match(stem)
    candidates = [(stem, 0)]
    if resubmission:
        number = int(resubmission.group("n"))
        candidates.append((resubmission.group("stem"), number))
    for candidate, n in candidates:
        for notebook, assignment in notebooks.items():
            if candidate == notebook or candidate.endswith("_" + notebook):
                return assignment, notebook, n
    return None


def _visible(folder: Path) -> list[Path]:
    return sorted(p for p in folder.iterdir() if not p.name.startswith((".", "__MACOSX")))


def _is_wrapper(entry: Path, notebooks: dict[str, str]) -> bool:
    """Whether a lone top folder wraps many submissions rather than being one student's.

    A student's folder holds assignment folders or notebooks named as released; a wrapper
    holds student folders or LMS-named files (``<student>_..._<notebook>.ipynb``).
    """
    if not entry.is_dir():
        return False
    for child in _visible(entry):
        if child.is_dir() and child.name not in notebooks.values():
            return True
        if child.suffix == ".ipynb" and child.stem not in notebooks and _notebook_match(
                child.name, notebooks):
            return True
    return False


def _plan(root: Path, notebooks: dict[str, str]
          ) -> tuple[dict[tuple[str, str, str], tuple[Path, int]], list[Path]]:
    """({(student, assignment, notebook): (file, resubmission number)}, files not recognised)."""
    # An archive often wraps everything in one top folder: look inside it.
    entries = _visible(root)
    if len(entries) == 1 and _is_wrapper(entries[0], notebooks):
        root, entries = entries[0], _visible(entries[0])
    plan: dict[tuple[str, str, str], tuple[Path, int]] = {}
    skipped: list[Path] = []

    def add(student: str, path: Path) -> None:
        match = _notebook_match(path.name, notebooks)
        if match is None:
            skipped.append(path)
            return
        assignment, notebook, number = match
        key = (student_id(student), assignment, notebook)
        if key not in plan or number >= plan[key][1]:
            plan[key] = (path, number)

    for entry in entries:
        if entry.is_file() and entry.suffix == ".ipynb" and "_" in entry.name:
            add(entry.name.split("_", 1)[0], entry)
        elif entry.is_dir():
            for path in sorted(entry.rglob("*.ipynb")):
                if ".ipynb_checkpoints" not in path.parts:
                    add(entry.name, path)
        else:
            skipped.append(entry)
    return plan, skipped


def _forget_other_languages(target: Path, collected: set[str]) -> None:
    """Remove the earlier copies of ``target``'s notebook, in another language, that this
    collection does not bring (a student who handed in the English notebook, then the
    Chinese one, is graded on the Chinese one)."""
    notebook = split_name(target.stem)[0]
    for name in [notebook, *(translated_name(notebook, lang) for lang in TRANSLATIONS)]:
        if name not in collected:
            (target.parent / f"{name}.ipynb").unlink(missing_ok=True)


def collect(course: Course, path: str | Path, assignment: str | None = None
            ) -> tuple[list[Collected], list[str]]:
    """Copy the submissions found at ``path`` (folder or .zip) into ``submitted/``.

    Returns what was collected and the files that were not recognised as a submission.
    """
    path = Path(path)
    if not path.exists():
        raise CollectError(f"{path} does not exist")
    assignments = [assignment] if assignment else course.assignments()
    notebooks = {name: a for a in assignments for nb in course.notebook_names(a)
                 for name in [nb, *(translated_name(nb, lang) for lang in TRANSLATIONS)]}
    if not notebooks:
        wanted = ", ".join(assignments) or "any assignment"
        raise CollectError(f"no released notebooks for {wanted}: run `release` first")
    with tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        root = path
        if path.is_file():
            root = Path(scratch)
            _extract(path, root)
        plan, skipped = _plan(root, notebooks)
        collected = []
        copied = {(student, assignment_id, notebook) for student, assignment_id, notebook in plan}
        for (student, assignment_id, notebook), (source, _) in sorted(plan.items()):
            target = course.submitted / student / assignment_id / f"{notebook}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            _forget_other_languages(target, {n for s, a, n in copied
                                             if (s, a) == (student, assignment_id)})
            shutil.copyfile(source, target)
            collected.append(Collected(student, assignment_id, str(source.relative_to(root))))
        return collected, [str(p.relative_to(root)) for p in skipped]
