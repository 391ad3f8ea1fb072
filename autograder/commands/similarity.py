"""`similarity`: which submissions of an assignment are more alike than independent work is.

``python -m autograder similarity ASSIGNMENT [--past DIR ...] [--json FILE]`` compares every
pair of this term's submissions (``submitted/<student>/<assignment>/``), and each of them
with every submission of earlier terms kept in ``--past`` folders of the same layout
(``DIR/<student>/<assignment>/``), by

* their **code**: the solution cells (nbgrader ``solution`` code cells), parsed, never run,
  normalised against what a copier changes, fingerprinted by winnowing
  (:mod:`autograder.similarity.code`);
* their **written answers**: the markdown solution cells graded by hand, as content-word
  shingles, English or Chinese (:mod:`autograder.similarity.prose`);

with the released starter code and text of every language removed first and every
fragment weighed by how rare it is in the class (:mod:`autograder.similarity.scoring`,
which also says how the flagging bar is set from the class's own scores).

It prints the flagged pairs, writes the result as JSON (``--json``), atomically::

    {"assignment": "attention-scoring",
     "pairs": [{"a": "alice", "b": "past:2024/bob", "code": 0.93, "prose": 0.1,
                "score": 0.94, "flagged": true,
                "shared": [{"cell": "masked_softmax", "a_lines": [7, 15], "b_lines": [7, 14]}]}],
     "threshold": {"bar": 0.2, "median": 0.01, "mad": 0.004, "k": 6.0, "floor": 0.2},
     "clusters": [["ann", "ben", "cat"]], "notes": {"dan": ["bad JSON: ..."]}}

A past submission is labelled ``past:<name>/<student>``, ``<name>`` being the ``--past``
folder's name (or its parent's, for a folder named ``submitted``). ``shared`` lists the
rare fragments a pair has in common (for pairs scoring at least half the bar; ``b_cell``
where b's fragment is in another cell). The same result, with the shared fragments' lines,
is recorded as ``reports/<assignment>.similarity.json`` for the class report (instructors
only), which shows the flagged pairs side by side.

Nothing a student handed in is trusted: a notebook that is not JSON, lacks cells, holds a
cell that does not parse or is huge is compared as far as it can be and named in
``notes``; a student folder, or a notebook, that is a symbolic link is not followed.
"""

from __future__ import annotations

import datetime
import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from ..course import Course
from ..course.languages import TRANSLATIONS, translated_name
from ..similarity.code import code_runs, defined_names
from ..similarity.fingerprints import Fingerprints, Place, all_hashes, kgrams, winnow
from ..similarity.prose import SHINGLE, prose_tokens
from ..similarity.scoring import FLOOR, Compared, Comparison, K, compare

CODE_K = 12              # tokens per code k-gram
CODE_WINDOW = 4          # k-grams per winnowing window: every shared run of 15 tokens is seen
PROSE_WINDOW = 1         # written answers are short: every shingle is kept
MAX_NOTEBOOK_BYTES = 20_000_000
MAX_CELL_CHARS = 100_000
RECORD_SUFFIX = ".similarity.json"
PAST_PREFIX = "past:"
MAX_VIEWS = 12           # side-by-side fragments recorded per flagged pair
MAX_PAIRS_SHOWN = 60     # flagged pairs the report shows side by side (the highest)
CONTEXT_LINES = 2        # lines shown around a shared fragment


class SimilarityError(Exception):
    """Input refused whole (an unknown assignment, a --past folder that is not one)."""


@dataclass
class Handed:
    """What one submission holds of the assignment's solution cells."""

    label: str
    current: bool
    code: dict[str, str] = field(default_factory=dict)      # grade_id -> source
    prose: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass
class Starter:
    """The released notebooks' solution cells, in every language: what every student got."""

    notebooks: list[str]
    code: dict[str, list[str]]          # grade_id -> its starter source in each language
    prose: dict[str, list[str]]

    @property
    def graded_names(self) -> set[str]:
        return {name for sources in self.code.values() for s in sources
                for name in defined_names(s)}


# --------------------------------------------------------------------------- reading


def _source(cell: dict) -> str:
    source = cell.get("source", "")
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    return source if isinstance(source, str) else ""


def _solution_cells(notebook: object) -> list[tuple[str, str, str]]:
    """(grade_id, cell type, source) of a notebook's nbgrader solution cells."""
    cells = notebook.get("cells") if isinstance(notebook, dict) else None
    found = []
    for cell in cells if isinstance(cells, list) else []:
        if not isinstance(cell, dict):
            continue
        metadata = cell.get("metadata")
        nbgrader = metadata.get("nbgrader") if isinstance(metadata, dict) else None
        if not isinstance(nbgrader, dict) or not nbgrader.get("solution"):
            continue
        grade_id = nbgrader.get("grade_id")
        if isinstance(grade_id, str) and grade_id:
            found.append((grade_id, str(cell.get("cell_type")), _source(cell)))
    return found


def _cell_key(notebook: str, grade_id: str, notebooks: Sequence[str]) -> str:
    return grade_id if len(notebooks) == 1 else f"{notebook}/{grade_id}"


def load_starter(course: Course, assignment: str) -> Starter:
    """The starter cells of ``assignment``'s release (refused if it has no release)."""
    notebooks = course.notebook_names(assignment) if (course.release / assignment).is_dir() \
        else []
    if not notebooks:
        raise SimilarityError(f"{assignment}: no released notebook in "
                              f"{course.release / assignment} (run release first)")
    code: dict[str, list[str]] = {}
    prose: dict[str, list[str]] = {}
    for notebook in notebooks:
        paths = [course.release / assignment / f"{notebook}.ipynb"]
        paths += [course.release / assignment / f"{translated_name(notebook, lang)}.ipynb"
                  for lang in TRANSLATIONS]
        for path in paths:
            if not path.is_file():
                continue
            for grade_id, kind, source in _solution_cells(json.loads(path.read_text("utf-8"))):
                into = code if kind == "code" else prose
                into.setdefault(_cell_key(notebook, grade_id, notebooks), []).append(source)
    return Starter(notebooks, code, prose)


def _notebook_path(folder: Path, notebook: str) -> Path | None:
    """The notebook a submission folder holds for ``notebook``: English first, as grading."""
    for stem in [notebook, *(translated_name(notebook, lang) for lang in TRANSLATIONS)]:
        path = folder / f"{stem}.ipynb"
        if path.exists() or path.is_symlink():
            return path
    return None


def read_submission(folder: Path, label: str, current: bool, starter: Starter) -> Handed:
    """The solution cells a submission folder holds, with a note for whatever is wrong."""
    handed = Handed(label, current)
    for notebook in starter.notebooks:
        path = _notebook_path(folder, notebook)
        if path is None:
            handed.notes.append(f"no notebook {notebook}.ipynb")
            continue
        if path.is_symlink() or not path.is_file():
            handed.notes.append(f"{path.name}: not a regular file (not followed)")
            continue
        if path.stat().st_size > MAX_NOTEBOOK_BYTES:
            handed.notes.append(f"{path.name}: larger than {MAX_NOTEBOOK_BYTES} bytes, not read")
            continue
        try:
            content = json.loads(path.read_bytes().decode("utf-8", "replace"))
        except (ValueError, RecursionError) as error:
            handed.notes.append(f"{path.name}: not a notebook (bad JSON: {error})")
            continue
        cells = _solution_cells(content)
        if not cells:
            handed.notes.append(f"{path.name}: no solution cell")
        for grade_id, kind, source in cells:
            key = _cell_key(notebook, grade_id, starter.notebooks)
            into = handed.code if kind == "code" else handed.prose
            if key not in (starter.code if kind == "code" else starter.prose):
                continue          # a cell the release does not have: not an answer
            if key in into:
                handed.notes.append(f"cell {key}: twice in the notebook; the first compared")
                continue
            if len(source) > MAX_CELL_CHARS:
                handed.notes.append(f"cell {key}: {len(source)} characters; the first "
                                    f"{MAX_CELL_CHARS} compared")
                source = source[:MAX_CELL_CHARS]
            into[key] = source
        missing = sorted((set(starter.code) | set(starter.prose))
                         - set(handed.code) - set(handed.prose))
        if cells and missing:
            handed.notes.append(f"cell(s) missing: {', '.join(missing)}")
    return handed


def _submissions(folder: Path, assignment: str) -> list[tuple[str, Path]]:
    """(student, folder) of every submission of ``assignment`` under a submitted/ folder;
    a student folder that is a symbolic link is not followed."""
    found = []
    for student in sorted(folder.iterdir()) if folder.is_dir() else []:
        own = student / assignment
        if student.name.startswith(".") or student.is_symlink() or own.is_symlink():
            continue
        if own.is_dir():
            found.append((student.name, own))
    return found


def past_folders(paths: Sequence[str | Path], assignment: str) -> list[tuple[str, Path]]:
    """(name, folder) of every --past folder, or :class:`SimilarityError` naming the first
    that is not a submitted/ layout holding ``assignment``, or a name given twice."""
    named: dict[str, Path] = {}
    for given in paths:
        path = Path(given)
        if not path.is_dir():
            raise SimilarityError(f"--past {given}: no such folder")
        if not _submissions(path, assignment):
            hint = (f" (did you mean {path / 'submitted'}?)"
                    if (path / "submitted").is_dir() else "")
            raise SimilarityError(f"--past {given}: not a submitted/ layout: no "
                                  f"<student>/{assignment}/ folder in it{hint}")
        resolved = path.resolve()
        name = resolved.parent.name if resolved.name == "submitted" else resolved.name
        if name in named:
            raise SimilarityError(f"--past {given}: its label past:{name}/ is also that of "
                                  f"{named[name]}; rename one of the folders")
        named[name] = path
    return list(named.items())


# --------------------------------------------------------------------------- comparing


def _code_prints(handed: Handed, starter: Starter, starter_hashes: set[int]) -> Fingerprints:
    runs, notes = code_runs(handed.code, starter.graded_names)
    handed.notes += notes
    prints = Fingerprints()
    for cell, cell_runs in runs.items():
        for run in cell_runs:
            for h, first, last in winnow(kgrams(run, CODE_K), CODE_WINDOW):
                if h not in starter_hashes:
                    prints.add(h, Place(cell, first, last))
    return prints


def _prose_prints(handed: Handed, starter_hashes: set[int]) -> Fingerprints:
    prints = Fingerprints()
    for cell, text in handed.prose.items():
        for h, first, last in winnow(kgrams(prose_tokens(text), SHINGLE), PROSE_WINDOW):
            if h not in starter_hashes:
                prints.add(h, Place(cell, first, last))
    return prints


def _starter_hashes(starter: Starter) -> tuple[set[int], set[int]]:
    code: set[int] = set()
    languages = max((len(sources) for sources in starter.code.values()), default=0)
    for index in range(languages):     # each language's cells together, as a student has them
        cells = {cell: sources[index] for cell, sources in starter.code.items()
                 if index < len(sources)}
        runs, _ = code_runs(cells, starter.graded_names)
        code |= all_hashes([run for cell_runs in runs.values() for run in cell_runs], CODE_K)
    prose = {h for sources in starter.prose.values() for text in sources
             for h in all_hashes([prose_tokens(text)], SHINGLE)}
    return code, prose


@dataclass
class Result:
    """A comparison with what it was made of."""

    assignment: str
    handed: list[Handed]
    comparison: Comparison
    starter: Starter

    def as_json(self) -> dict:
        c = self.comparison
        return {"assignment": self.assignment,
                "pairs": [pair.as_json() for pair in c.pairs],
                "threshold": {"bar": round(c.threshold, 4), "median": round(c.median, 4),
                              "mad": round(c.mad, 4), "k": K, "floor": FLOOR},
                "clusters": c.clusters,
                "notes": {h.label: h.notes for h in self.handed if h.notes}}


def similarity(course: Course, assignment: str, past: Sequence[str | Path] = ()) -> Result:
    """Compare every submission of ``assignment`` (and the past ones): see the module."""
    if assignment not in course.assignments():
        raise SimilarityError(f"{assignment}: not an assignment of this course "
                              f"({', '.join(course.assignments())})")
    past_named = past_folders(past, assignment)
    starter = load_starter(course, assignment)
    code_starter, prose_starter = _starter_hashes(starter)
    handed = [read_submission(folder, student, True, starter)
              for student, folder in _submissions(course.submitted, assignment)]
    for name, root in past_named:
        handed += [read_submission(folder, f"{PAST_PREFIX}{name}/{student}", False, starter)
                   for student, folder in _submissions(root, assignment)]
    compared = [Compared(h.label, h.current, _code_prints(h, starter, code_starter),
                         _prose_prints(h, prose_starter), h.notes) for h in handed]
    return Result(assignment, handed, compare(compared), starter)


# --------------------------------------------------------------------------- writing


def write_json_atomically(data: dict, path: Path) -> None:
    """``data`` as JSON in ``path``: whoever reads it finds the old file or the new one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.partial")
    try:
        partial.write_text(json.dumps(data, ensure_ascii=False, indent=1) + "\n",
                           encoding="utf-8")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)


def record_path(course: Course, assignment: str) -> Path:
    return course.root / "reports" / f"{assignment}{RECORD_SUFFIX}"


def _view(source: str, lines: list[int], starter_lines: set[str]) -> list[dict]:
    """The lines of a cell around a shared fragment: number, text, and whether each is
    shared, released starter text, or context."""
    text = source.splitlines()
    first, last = max(1, lines[0]), min(len(text), lines[1])
    shown = []
    for number in range(max(1, first - CONTEXT_LINES), min(len(text), last + CONTEXT_LINES) + 1):
        line = text[number - 1]
        kind = ("starter" if line.strip() and line.strip() in starter_lines
                else "shared" if first <= number <= last else "context")
        shown.append({"n": number, "text": line, "kind": kind})
    return shown


def views(result: Result) -> list[dict]:
    """For every flagged pair, its shared fragments side by side (what the report shows)."""
    by_label = {h.label: h for h in result.handed}
    starter_lines = {key: {line.strip() for s in sources for line in s.splitlines()}
                     for key, sources in (result.starter.code | result.starter.prose).items()}
    shown = []
    for pair in [p for p in result.comparison.pairs if p.flagged][:MAX_PAIRS_SHOWN]:
        a, b = by_label[pair.a], by_label[pair.b]
        fragments = []
        for fragment in pair.shared[:MAX_VIEWS]:
            cell_a, cell_b = fragment["cell"], fragment.get("b_cell", fragment["cell"])
            source_a = a.code.get(cell_a, a.prose.get(cell_a, ""))
            source_b = b.code.get(cell_b, b.prose.get(cell_b, ""))
            fragments.append({
                "cell": cell_a, "b_cell": cell_b, "prose": cell_a in result.starter.prose,
                "a": _view(source_a, fragment["a_lines"], starter_lines.get(cell_a, set())),
                "b": _view(source_b, fragment["b_lines"], starter_lines.get(cell_b, set()))})
        shown.append({"a": pair.a, "b": pair.b, "code": round(pair.code, 4),
                      "prose": round(pair.prose, 4), "score": round(pair.score, 4),
                      "fragments": fragments, "more": max(0, len(pair.shared) - MAX_VIEWS)})
    return shown


def record(course: Course, result: Result) -> Path:
    """Record ``result`` for the class report, with its side-by-side views."""
    data = result.as_json()
    data["computed"] = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    data["submissions"] = sum(h.current for h in result.handed)
    data["past_submissions"] = sum(not h.current for h in result.handed)
    data["views"] = views(result)
    data["flagged"] = sum(pair.flagged for pair in result.comparison.pairs)
    path = record_path(course, result.assignment)
    write_json_atomically(data, path)
    return path


def load_record(course: Course, assignment: str) -> dict | None:
    """The recorded comparison of ``assignment`` (None if none, or unreadable)."""
    try:
        data = json.loads(record_path(course, assignment).read_text("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or data.get("assignment") != assignment:
        return None
    threshold = data.get("threshold")
    numbers = ("bar", "median", "mad", "k", "floor")
    if not isinstance(threshold, dict) or not all(
            isinstance(threshold.get(key), int | float) for key in numbers):
        return None
    if not isinstance(data.get("views"), list) or not isinstance(data.get("clusters"), list) \
            or not isinstance(data.get("notes"), dict) or not isinstance(data.get("flagged"), int):
        return None
    return data
