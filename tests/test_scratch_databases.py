"""A grading process's scratch gradebook skips durability; every other database keeps it."""

from __future__ import annotations

from sqlalchemy import create_engine, text

from autograder.worker import scratch_databases


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
