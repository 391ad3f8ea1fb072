"""A grading process's scratch gradebooks skip durability and share one engine (so SQL is
compiled once); every other database keeps durability and gets nbgrader's own engine."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import nbgrader.api
from nbgrader.api import Gradebook
from sqlalchemy import create_engine, text

from autograder.submission.scratch_gradebook import scratch_databases


def _settings(path) -> tuple[int, str]:
    engine = create_engine(f"sqlite:///{path}")
    with engine.connect() as connection:
        settings = (connection.execute(text("PRAGMA synchronous")).scalar(),
                    connection.execute(text("PRAGMA journal_mode")).scalar())
    engine.dispose()
    return settings


def test_only_databases_in_the_scratch_folder_skip_the_disk_sync(tmp_path):
    scratch, kept = tmp_path / "scratch", tmp_path / "course"
    scratch.mkdir()
    kept.mkdir()
    with scratch_databases(scratch):
        assert _settings(scratch / "gradebook.db") == (0, "memory")
        assert _settings(kept / "gradebook.db") == (2, "delete")
    assert _settings(scratch / "other.db") == (2, "delete"), "the listener outlived its grading"


def _students(url: str) -> list[str]:
    with Gradebook(url) as gb:
        return [student.id for student in gb.students]


def test_scratch_gradebooks_share_one_engine_each_on_its_own_file(tmp_path, monkeypatch):
    # nbgrader runs alembic, from PATH, on a new gradebook
    monkeypatch.setenv("PATH", f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    scratch, kept = tmp_path / "scratch", tmp_path / "course"
    scratch.mkdir()
    kept.mkdir()
    first, second = f"sqlite:///{scratch / 'first.db'}", f"sqlite:///{scratch / 'second.db'}"
    course = f"sqlite:///{kept / 'gradebook.db'}"
    with scratch_databases(scratch):
        with Gradebook(first) as gb:
            gb.add_student("ada")
            engine = gb.engine
        with Gradebook(second) as gb:
            gb.add_student("bob")
            assert gb.engine is engine                # compiled once, used by every one
        with Gradebook(course) as gb:
            gb.add_student("cy")
            assert gb.engine is not engine            # the course's gradebook: nbgrader's
        assert (_students(first), _students(second)) == (["ada"], ["bob"])
    assert nbgrader.api.create_engine.__module__.startswith("sqlalchemy")   # put back
    assert _students(course) == ["cy"]
