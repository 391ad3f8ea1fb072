"""The course directory: where assignments, submissions and the gradebook live."""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from nbgrader.apps import NbGraderAPI
from nbgrader.coursedir import CourseDirectory
from traitlets.config import Config

from .nbgrader_setup import DEFAULT_TIMEOUT, RELEASE_DIR, SOURCE_DIR, configure


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
        """Every assignment written in the source directory, in name order."""
        return sorted(p.name for p in self.source.iterdir()
                      if p.is_dir() and (p / f"{p.name}.py").exists())

    def notebook_names(self, assignment: str) -> list[str]:
        """Names (without .ipynb) of the notebooks an assignment's release holds."""
        return sorted(p.stem for p in (self.release / assignment).glob("*.ipynb"))

    def config(self, timeout: int = DEFAULT_TIMEOUT, db_url: str | None = None,
               extra: Config | None = None) -> Config:
        c = configure(Config(), self.root, timeout=timeout)
        if db_url is not None or self.db is not None:
            c.CourseDirectory.db_url = db_url or self.db
        c.NbGraderAPI.log_level = "WARN"
        if extra is not None:
            c.merge(extra)
        return c

    def api(self, timeout: int = DEFAULT_TIMEOUT, db_url: str | None = None,
            extra: Config | None = None) -> NbGraderAPI:
        """nbgrader's Python API for this course directory (``extra`` settings on top)."""
        _put_interpreter_on_path()
        config = self.config(timeout=timeout, db_url=db_url, extra=extra)
        coursedir = CourseDirectory(config=config)
        return NbGraderAPI(coursedir=coursedir, config=config)


def _put_interpreter_on_path() -> None:
    """nbgrader runs ``alembic`` (gradebook migrations) from PATH: use this environment's."""
    bindir = str(Path(sys.executable).parent)
    if bindir not in os.environ.get("PATH", "").split(os.pathsep):
        os.environ["PATH"] = bindir + os.pathsep + os.environ.get("PATH", "")
