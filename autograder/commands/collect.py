"""`collect`: a folder or .zip of submissions -> ``submitted/<student>/<assignment>/``.

Three layouts are recognised, as learning-management systems (LMS) download them
(:mod:`autograder.lms.handed_in` names their rules):

* ``<student>/<assignment>/<notebook>.ipynb`` — nbgrader's own layout (its
  ``timestamp.txt``, if there, is the submission time);
* ``<student>/<notebook>.ipynb`` — a folder per student. Moodle names these folders
  ``<Full Name>_<participant id>_assignsubmission_file_`` (or puts that before each file
  name);
* ``<name>_[LATE_]<user id>_<attachment id>_<notebook>.ipynb`` — flat files, as Canvas
  names them; a resubmission's ``-1``, ``-2`` … suffix is dropped and the highest one wins
  (the output says which file was kept over which).

Who each submission is from is kept as the LMS gives it, in the course's roster
(:mod:`autograder.lms.roster`): the LMS, its user or participant id, the name as written,
Canvas's attachment id and late flag, the submission time, the file names. The student id
derived from the name is unique: two John Smiths become ``smithjohn-12345`` and
``smithjohn-67890``, and the output says so. Moodle's worksheet (``--moodle-worksheet``),
exported with the download, adds each participant's e-mail address (which links one
student's assignments, as Moodle numbers participants per assignment) and submission time.

A collection that would put two files in one place — two people into one student, or two
files of one student that are not resubmissions of each other — is refused, naming the
files, before anything is copied.

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
from dataclasses import dataclass, field
from pathlib import Path

from ..course import Course
from ..course.languages import TRANSLATIONS, split_name, translated_name
from ..lms import moodle
from ..lms.handed_in import (
    CANVAS,
    FOLDER,
    MOODLE,
    NBGRADER_TIMESTAMP,
    HandedIn,
    from_canvas,
    from_moodle,
)
from ..lms.roster import Roster, canvas_key, email_key, moodle_key, safe_id
from ..lms.table import LmsFileError
from .lateness import nbgrader_timestamp

_RESUBMISSION = re.compile(r"^(?P<stem>.+?)-(?P<n>\d+)$")


class CollectError(ValueError):
    """The input cannot be collected (not found, not a zip or folder, unsafe archive)."""


@dataclass(frozen=True)
class Collected:
    student: str
    assignment: str
    source: str        # where the submission came from, relative to the input


@dataclass
class Collection:
    """What a collect did: the submissions copied, the files that are not submissions, and
    what the instructor should know (names shared by several people, resubmissions)."""

    collected: list[Collected] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _File:
    handed: HandedIn
    assignment: str
    notebook: str          # the file name in submitted/, without .ipynb
    number: int            # resubmission number (0: the first)
    path: Path
    source: str            # relative to the input


def student_id(raw: str) -> str:
    """A safe student id from a folder's name."""
    cleaned = safe_id(raw)
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


def _timestamp(path: Path) -> str:
    """nbgrader's ``timestamp.txt`` beside a notebook (or its assignment folder), as ISO 8601
    ("" if none)."""
    for folder in (path.parent, path.parent.parent):
        try:
            stamp = nbgrader_timestamp(folder / NBGRADER_TIMESTAMP)
        except ValueError as error:
            raise CollectError(f"{error}; nothing was collected") from error
        if stamp:
            return stamp
    return ""


def _files(root: Path, notebooks: dict[str, str]
           ) -> tuple[list[_File], list[Path], list[str]]:
    """Every handed-in notebook under ``root``, with whom the LMS says it is from; the files
    that are not; notes. A student of an LMS who renamed the one notebook of the one
    assignment collected (``attention-scoring (1).ipynb``, ``Copy of …``) and handed in no
    notebook under its name is not lost: the renamed file is taken, and a note says so."""
    # An archive often wraps everything in one top folder: look inside it.
    entries = _visible(root)
    if len(entries) == 1 and _is_wrapper(entries[0], notebooks):
        entries = _visible(entries[0])
    found: list[_File] = []
    skipped: list[Path] = []
    renamed: list[tuple[HandedIn, Path]] = []
    english = {split_name(name)[0]: assignment for name, assignment in notebooks.items()}

    def add(handed: HandedIn, path: Path) -> None:
        match = _notebook_match(path.name, notebooks)
        if match is None and handed.lms != FOLDER and len(english) == 1:
            renamed.append((handed, path))
            return
        if match is None:
            skipped.append(path)
            return
        assignment, notebook, number = match
        if handed.lms == FOLDER and not handed.submitted_at:
            handed = HandedIn(FOLDER, handed.user, handed.name, path.name,
                              submitted_at=_timestamp(path))
        found.append(_File(handed, assignment, notebook, number, path,
                           str(path.relative_to(root))))

    for entry in entries:
        if entry.is_file() and entry.suffix == ".ipynb":
            handed = from_moodle(entry.name) or from_canvas(entry.name)
            if handed is None and "_" in entry.name:      # <student>_<anything>_<notebook>
                user = entry.name.split("_", 1)[0]
                handed = HandedIn(FOLDER, student_id(user), user, entry.name)
            if handed is None:
                skipped.append(entry)
            else:
                add(handed, entry)
        elif entry.is_dir():
            folder = from_moodle(entry.name + "/")
            for path in sorted(entry.rglob("*.ipynb")):
                if ".ipynb_checkpoints" in path.parts:
                    continue
                if folder is not None:
                    add(HandedIn(MOODLE, folder.user, folder.name,
                                 str(path.relative_to(entry)), folder.prefix), path)
                else:
                    add(HandedIn(FOLDER, student_id(entry.name), entry.name, path.name), path)
        else:
            skipped.append(entry)
    notes = []
    for handed, path in renamed:
        (notebook, assignment), = english.items()
        if any(f.handed.identity == handed.identity for f in found) or \
                sum(h.identity == handed.identity for h, _ in renamed) > 1:
            skipped.append(path)      # the notebook under its name too, or several: unclear
            continue
        found.append(_File(handed, assignment, notebook, -1, path, str(path.relative_to(root))))
        notes.append(f"{path.relative_to(root)}: not named as the notebook, but the only "
                     f"notebook this student handed in: collected as {notebook}.ipynb")
    return found, skipped, notes


def _identities(files: list[_File], worksheet: moodle.Worksheet | None
                ) -> dict[str, tuple[list[str], str, str]]:
    """{identity: (keys, name id, LMS number)} of the LMS students among ``files``."""
    wanted: dict[str, tuple[list[str], str, str]] = {}
    names: dict[str, tuple[str, str]] = {}      # identity -> (name, a file with it)
    for item in files:
        handed = item.handed
        identity = _identity_of(item, worksheet) if handed.lms != FOLDER else ""
        if identity and names.setdefault(identity, (handed.name, item.source))[0] != handed.name:
            raise CollectError(f"nothing was collected: {names[identity][1]} and {item.source} "
                               f"have one LMS identity ({identity}) and two names")
        if handed.lms == CANVAS:
            key = canvas_key(handed.user)
            wanted[key] = ([key], safe_id(handed.name), handed.user)
        elif handed.lms == MOODLE:
            keys = [moodle_key(item.assignment, handed.user)]
            row = worksheet.participant(handed.user) if worksheet else None
            name = row.name if row and row.name else handed.name
            if row and row.email:
                keys.insert(0, email_key(row.email))
            base = safe_id(name.lower().replace(" ", "-"))
            if not base and row and row.email:      # a name in another script: the address
                base = safe_id(row.email.split("@", 1)[0].lower())
            wanted[keys[0]] = (keys, base, handed.user)
    return wanted


def _identity_of(item: _File, worksheet: moodle.Worksheet | None) -> str:
    handed = item.handed
    if handed.lms == CANVAS:
        return canvas_key(handed.user)
    row = worksheet.participant(handed.user) if worksheet else None
    if row and row.email:
        return email_key(row.email)
    return moodle_key(item.assignment, handed.user)


def _plan(files: list[_File], ids: dict[str, str], worksheet: moodle.Worksheet | None
          ) -> tuple[dict[tuple[str, str, str], _File], list[str]]:
    """({(student, assignment, notebook): the file kept}, notes), refusing two files that
    would land in one place and are not one's resubmission of the other."""
    places: dict[tuple[str, str, str], list[_File]] = {}
    for item in files:
        student = item.handed.user if item.handed.lms == FOLDER \
            else ids[_identity_of(item, worksheet)]
        places.setdefault((student, item.assignment, item.notebook), []).append(item)
    plan, notes, clashes = {}, [], []
    for place, candidates in sorted(places.items()):
        candidates.sort(key=lambda f: (f.number, f.source))
        kept, latest = candidates[-1], [f for f in candidates if f.number == candidates[-1].number]
        if len(latest) > 1:
            clashes.append(f"{' and '.join(f.source for f in latest)} would all be "
                           f"{place[0]}'s {place[2]}.ipynb")
            continue
        plan[place] = kept
        for older in candidates[:-1]:
            notes.append(f"{place[0]}: kept the resubmission {kept.source} over {older.source}")
    if clashes:
        raise CollectError("nothing was collected: " + "; ".join(clashes) + ". Collect them "
                           "apart (--assignment, or one download at a time), or remove the "
                           "file that is not the student's submission")
    return plan, notes


def _record(item: _File, worksheet: moodle.Worksheet | None) -> dict:
    """What the roster keeps of one collected submission."""
    handed = item.handed
    row = worksheet.participant(handed.user) if worksheet and handed.lms == MOODLE else None
    return {"lms": handed.lms, "user": handed.user,
            "name": row.name if row and row.name else handed.name,
            "prefix": handed.prefix, "attachment": handed.attachment, "late": handed.late,
            "submitted_at": (row.submitted_at if row else "") or handed.submitted_at,
            "files": {}}


def _forget_other_languages(target: Path, collected: set[str]) -> None:
    """Remove the earlier copies of ``target``'s notebook, in another language, that this
    collection does not bring (a student who handed in the English notebook, then the
    Chinese one, is graded on the Chinese one)."""
    notebook = split_name(target.stem)[0]
    for name in [notebook, *(translated_name(notebook, lang) for lang in TRANSLATIONS)]:
        if name not in collected:
            (target.parent / f"{name}.ipynb").unlink(missing_ok=True)


def collect(course: Course, path: str | Path, assignment: str | None = None,
            moodle_worksheet: str | Path | None = None) -> Collection:
    """Copy the submissions found at ``path`` (folder or .zip) into ``submitted/`` and
    record who they are from in the roster. ``moodle_worksheet``: the grading worksheet
    Moodle exported with the download (e-mail addresses and submission times).

    Refuses, changing nothing, an input that would merge or drop a submission."""
    path = Path(path)
    if not path.exists():
        raise CollectError(f"{path} does not exist")
    assignments = [assignment] if assignment else course.assignments()
    notebooks = {name: a for a in assignments for nb in course.notebook_names(a)
                 for name in [nb, *(translated_name(nb, lang) for lang in TRANSLATIONS)]}
    if not notebooks:
        wanted = ", ".join(assignments) or "any assignment"
        raise CollectError(f"no released notebooks for {wanted}: run `release` first")
    worksheet = None
    if moodle_worksheet is not None:
        try:
            worksheet = moodle.read_worksheet(Path(moodle_worksheet))
        except LmsFileError as error:
            raise CollectError(f"{error}; nothing was collected") from error
    # Under the roster's lock: on a hub, launches and the grading service change it too.
    with Roster.updating(course) as roster, \
            tempfile.TemporaryDirectory(prefix="collect-") as scratch:
        root = path
        if path.is_file():
            root = Path(scratch)
            _extract(path, root)
        files, skipped, renaming = _files(root, notebooks)
        folders = {f.handed.user for f in files if f.handed.lms == FOLDER}
        existing = {p.name for p in course.submitted.iterdir()} if course.submitted.is_dir() \
            else set()
        ids, notes = roster.allocate(_identities(files, worksheet), folders | existing)
        plan, resubmitted = _plan(files, ids, worksheet)
        result = Collection(notes=notes + renaming + resubmitted,
                            skipped=[str(p.relative_to(root)) for p in skipped])
        for (student, assignment_id, notebook), item in sorted(plan.items()):
            target = course.submitted / student / assignment_id / f"{notebook}.ipynb"
            target.parent.mkdir(parents=True, exist_ok=True)
            _forget_other_languages(target, {n for s, a, n in plan
                                             if (s, a) == (student, assignment_id)})
            shutil.copyfile(item.path, target)
            if item.handed.lms == FOLDER and item.handed.submitted_at:
                (target.parent / NBGRADER_TIMESTAMP).write_text(
                    item.handed.submitted_at.replace("T", " ", 1))   # as nbgrader keeps it
            result.collected.append(Collected(student, assignment_id, item.source))
            if item.handed.lms != FOLDER:
                identity = _identity_of(item, worksheet)
                keys = _identities([item], worksheet)[identity][0]
                row = worksheet.participant(item.handed.user) \
                    if worksheet and item.handed.lms == MOODLE else None
                roster.remember(student, item.handed.lms, _record(item, worksheet)["name"],
                                keys, row.email if row else "")
                record = roster.submission(student, assignment_id)
                fresh = _record(item, worksheet)
                if record is None or {k: v for k, v in record.items() if k != "files"} != \
                        {k: v for k, v in fresh.items() if k != "files"}:
                    record = fresh
                record["files"][notebook] = item.source.rsplit("/", 1)[-1]
                roster.record(student, assignment_id, record)
        return result
