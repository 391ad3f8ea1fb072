"""`release`: solutions/ -> exercises/, then check that the release gives nothing away."""

from __future__ import annotations

import re
from pathlib import Path

import jupytext
import nbformat

from ..course import Course
from ..course.catalogues import translated_entries
from ..course.exchange import Exchange
from ..course.files import MARKERS, REGION, SUITE_FILE
from ..course.languages import METADATA_KEY, TRANSLATIONS, catalogue_path, translated_name
from ..submission import settings
from .translation import translate_notebook

_TRAILING_COMMENT = re.compile(r"\s+#.*$")


def code_line(line: str) -> str:
    """A line of code without indentation and trailing comment, for comparisons."""
    return _TRAILING_COMMENT.sub("", line).strip()


class ReleaseLeak(RuntimeError):
    """The student release contains solution code or hidden tests."""


def build_source_notebook(course: Course, assignment: str) -> Path | None:
    """Write ``solutions/A/A.ipynb`` from its jupytext source ``solutions/A/A.py``, if the
    assignment is written as one (nbgrader's own ``.ipynb`` sources are released as they are).

    Each cell's id is its nbgrader ``grade_id`` (or its position, for a cell without one),
    so that releasing the same source gives the same notebook, byte for byte.
    """
    script = course.script(assignment)
    if script is None:
        return None
    notebook = jupytext.read(script)
    notebook.metadata.pop("jupytext", None)
    for index, cell in enumerate(notebook.cells):
        cell.id = cell.metadata.get("nbgrader", {}).get("grade_id") or f"cell-{index}"
    target = script.with_suffix(".ipynb")
    nbformat.write(notebook, target)
    return target


def _whole_cell_secret(cell: nbformat.NotebookNode) -> bool:
    """Whether nbgrader replaces the whole cell by a stub in the release: a solution cell
    without region markers (a written answer's model answer and rubric, say)."""
    return bool(cell.metadata.get("nbgrader", {}).get("solution")) \
        and not REGION.search(cell.source)


def secret_lines(source: nbformat.NotebookNode) -> set[str]:
    """Lines inside solution and hidden-test regions, and of solution cells nbgrader
    replaces whole (a written answer's model answer), long enough to be telling."""
    lines = set()
    for cell in source.cells:
        bodies = [cell.source] if _whole_cell_secret(cell) else \
            [body for _, body in REGION.findall(cell.source)]
        for body in bodies:
            for line in body.splitlines():
                line = code_line(line)
                if len(line) >= 12 and not line.startswith("#"):
                    lines.add(line)
    return lines


_INLINE_CODE = re.compile(r"`([^`\n]+)`")


def public_lines(source: nbformat.NotebookNode) -> set[str]:
    """Lines of code the source shows students: outside solution and hidden-test regions,
    including the inline code of the instructions (``optimizer.zero_grad()``)."""
    cells = [cell for cell in source.cells if not _whole_cell_secret(cell)]
    shown = {code_line(line) for cell in cells
             for line in REGION.sub("", cell.source).splitlines()}
    shown |= {code_line(span) for cell in cells if cell.cell_type == "markdown"
              for span in _INLINE_CODE.findall(cell.source)}
    return shown


def source_notebooks(course: Course, assignment: str) -> list[nbformat.NotebookNode]:
    """The instructor's notebooks of an assignment, as written (with the solutions)."""
    script = course.script(assignment)
    if script is not None:
        return [nbformat.from_dict(jupytext.read(script))]
    return [nbformat.read(path, as_version=4) for path in course.source_notebooks(assignment)]


def assignment_secrets(course: Course, assignment: str) -> set[str]:
    """Telling lines of an assignment's solutions, hidden regions and hidden-test suite.

    A line the notebook also shows outside those regions (``super().__init__()``, a
    signature, a line of the visible tests) is public, not a secret.
    """
    sources = source_notebooks(course, assignment)
    secrets = set().union(*map(secret_lines, sources))
    suite = course.source / assignment / SUITE_FILE
    if suite.exists():
        secrets |= {line for line in map(code_line, suite.read_text().splitlines())
                    if len(line) >= 12
                    and not line.startswith(("#", '"""', "import ", "from "))}
    return secrets - set().union(*map(public_lines, sources))


TELLING_LENGTH = 40    # a secret line this long gives the answer away on its own


def find_leaks(secrets: set[str], lines: list[str]) -> list[str]:
    """The secret lines among ``lines`` that give something away.

    A long secret line does on its own. A short one (``loss.backward()``) is in every
    training loop of the book: it counts only next to another secret line, as in a copied
    block of solution code.
    """
    shown = [code_line(line) for line in lines]
    shown = [line for line in shown if line]
    leaks = set()
    for i, line in enumerate(shown):
        if line not in secrets:
            continue
        neighbours = shown[max(0, i - 1):i] + shown[i + 1:i + 2]
        if len(line) >= TELLING_LENGTH or any(n in secrets for n in neighbours):
            leaks.add(line)
    return sorted(leaks)


def write_translations(course: Course, assignment: str) -> list[Path]:
    """Write ``<notebook>.<lang>.ipynb`` beside each released notebook that the course has
    a ``lang`` catalogue of (:mod:`autograder.course.languages`): the English release with
    its markdown translated (:func:`~.translation.translate_notebook`). Raises
    :class:`~.translation.MissingTranslation` if a block has no translation."""
    written = []
    for notebook in course.notebook_names(assignment):
        english = course.release / assignment / f"{notebook}.ipynb"
        for language in TRANSLATIONS:
            catalogue = catalogue_path(course.root, assignment, notebook, language)
            if not catalogue.exists():
                continue
            translated = translate_notebook(nbformat.read(english, as_version=4),
                                            translated_entries(catalogue), language,
                                            name=f"{assignment}/{notebook}.ipynb")
            target = english.with_name(f"{translated_name(notebook, language)}.ipynb")
            nbformat.write(translated, target)
            written.append(target)
    return written


def translation_differences(english: nbformat.NotebookNode,
                            translated: nbformat.NotebookNode) -> list[str]:
    """How a translated notebook differs from its English release other than in the text of
    its course's markdown cells, their checksums and the language key: [] if it does not.

    Answers (nbgrader solution cells, the written answers' stubs included), code, outputs,
    ids and metadata must be the English release's, so a translation can carry nothing
    the release does not (no model answer, no hidden test)."""
    def bare(notebook: nbformat.NotebookNode) -> dict:
        data = nbformat.from_dict(notebook)
        data.metadata.pop(METADATA_KEY, None)
        for cell in data.cells:
            meta = cell.metadata.get("nbgrader", {})
            if cell.cell_type == "markdown" and not meta.get("solution"):
                cell.source = ""
                meta.pop("checksum", None)
        return data

    mine, theirs = bare(english), bare(translated)
    if len(mine.cells) != len(theirs.cells):
        return [f"{len(theirs.cells)} cells, not {len(mine.cells)}"]
    found = [f"cell {a.get('id', i)} differs" for i, (a, b)
             in enumerate(zip(mine.cells, theirs.cells, strict=True)) if a != b]
    if mine.metadata != theirs.metadata:
        found.append("the notebook's metadata differs")
    return found


def check_release(course: Course, assignment: str) -> None:
    """Raise :class:`ReleaseLeak` if a released file holds a marker or a secret line of
    code, or a translated notebook differs from its English release other than in its
    markdown's text."""
    secrets = assignment_secrets(course, assignment)
    release_dir = course.release / assignment
    if not release_dir.is_dir():
        raise ReleaseLeak(f"{assignment}: no release in {release_dir}")
    for notebook, translations in course.translated_notebooks(assignment).items():
        english = release_dir / f"{notebook}.ipynb"
        for path in translations.values():
            if not english.exists():
                raise ReleaseLeak(f"{path} is the translation of no released notebook")
            found = translation_differences(nbformat.read(english, as_version=4),
                                            nbformat.read(path, as_version=4))
            if found:
                raise ReleaseLeak(f"{path} is not its English release translated: {found[:3]}")
    for path in sorted(release_dir.rglob("*")):
        if not path.is_file():
            continue
        text = path.read_text(errors="replace")
        found = [m for m in MARKERS if m in text]
        if path.suffix == ".ipynb":
            cells = nbformat.reads(text, as_version=4).cells
            found += [leak for cell in cells
                      for leak in find_leaks(secrets, cell.source.splitlines())]
        else:
            found += find_leaks(secrets, text.splitlines())
        if found:
            raise ReleaseLeak(f"{path} gives away: {found[:3]}")


def release(course: Course, assignments: list[str] | None = None) -> list[str]:
    """Generate the student versions of ``assignments`` (default: all), with their
    translations, and check them."""
    api = settings.api(course)
    names = assignments or course.assignments()
    for assignment in names:
        build_source_notebook(course, assignment)
        result = api.generate_assignment(assignment, force=True, create=True)
        if not result["success"]:
            raise RuntimeError(f"nbgrader could not release {assignment}:\n{result['log']}"
                               f"\n{result.get('error', '')}")
        write_translations(course, assignment)
        check_release(course, assignment)
    return names


def publish(course: Course, exchange: Exchange, assignment: str) -> None:
    """Publish a released assignment to nbgrader's exchange (its ``release_assignment``),
    where students' Assignment List fetches it: ``exercises/<assignment>/``, English and
    translated notebooks, as ``release`` checked it."""
    result = settings.api(course, extra=settings.exchange_config(exchange)).release_assignment(
        assignment)
    if not result["success"]:
        raise RuntimeError(f"nbgrader could not publish {assignment}: {result['error']}")
