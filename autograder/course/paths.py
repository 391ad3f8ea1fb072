"""The course directory: where assignments, submissions and the gradebook live."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from .languages import ENGLISH, split_name

SOURCE_DIR = "solutions"      # nbgrader's source directory: the instructor's notebooks
RELEASE_DIR = "exercises"     # nbgrader's release directory: what students get


@dataclass(frozen=True)
class Course:
    """An nbgrader course directory laid out as this repository is."""

    root: Path
    db: str | None = None     # the gradebook's URL; None: gradebook.db (SQLite) in root

    @classmethod
    def at(cls, root: str | Path = ".", db: str | None = None) -> Course:
        return cls(Path(root).resolve(), db)

    @property
    def source(self) -> Path:
        return self.root / SOURCE_DIR

    @property
    def release(self) -> Path:
        return self.root / RELEASE_DIR

    @property
    def submitted(self) -> Path:
        return self.root / "submitted"

    @property
    def autograded(self) -> Path:
        return self.root / "autograded"

    @property
    def feedback(self) -> Path:
        return self.root / "feedback"

    @property
    def gradebook_path(self) -> Path:
        return self.root / "gradebook.db"

    @property
    def db_url(self) -> str:
        """nbgrader's ``db_url``: SQLite by default, PostgreSQL for a team of graders."""
        return self.db or f"sqlite:///{self.gradebook_path}"

    def assignments(self) -> list[str]:
        """Every assignment written in the source directory, in name order: a folder with
        the course's jupytext script (``<assignment>/<assignment>.py``) or with nbgrader's
        ``.ipynb`` notebooks."""
        return sorted(p.name for p in self.source.iterdir()
                      if p.is_dir() and (self.script(p.name) or self.source_notebooks(p.name)))

    def script(self, assignment: str) -> Path | None:
        """The assignment's notebook written as the course's jupytext script, if it is."""
        path = self.source / assignment / f"{assignment}.py"
        return path if path.exists() else None

    def source_notebooks(self, assignment: str) -> list[Path]:
        """The instructor's notebooks of an assignment: the ``.ipynb`` files of its source
        folder (for a jupytext assignment, the one the release writes from the script)."""
        folder = self.source / assignment
        return sorted(p for p in folder.glob("*.ipynb")
                      if ".ipynb_checkpoints" not in p.parts) if folder.is_dir() else []

    def notebook_names(self, assignment: str) -> list[str]:
        """Names (without .ipynb) of the notebooks an assignment's release holds, in
        English: ``<notebook>.<lang>.ipynb``, the same notebook translated, is not another
        notebook (see :mod:`autograder.course.languages`)."""
        return sorted(p.stem for p in (self.release / assignment).glob("*.ipynb")
                      if split_name(p.stem)[1] == ENGLISH)

    def translated_notebooks(self, assignment: str) -> dict[str, dict[str, Path]]:
        """{notebook: {language: path}} of the translations an assignment's release holds."""
        found: dict[str, dict[str, Path]] = {}
        for path in sorted((self.release / assignment).glob("*.ipynb")):
            notebook, language = split_name(path.stem)
            if language != ENGLISH:
                found.setdefault(notebook, {})[language] = path
        return found
