"""The grading process's scratch gradebooks: copies thrown away after grading, so made fast.

Inside :func:`scratch_databases`, every SQLite gradebook nbgrader opens under the scratch
folder

* skips durability: nbgrader commits every single score, and each commit would otherwise
  wait for the disk, several times;
* is reached through one SQLAlchemy engine for the process, and for the processes forked
  from it (:func:`scratch_engine`). nbgrader makes an engine for every gradebook it opens,
  and each engine compiles every query and insert again: for a small notebook, a third of
  its grading process's CPU time. One engine compiles each once — in the grading fork
  server's rehearsal (:mod:`autograder.batch.preload`) — and every grading process forked after
  it finds them compiled.

Any other database, the course's gradebook above all, is opened as nbgrader opens it.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import nbgrader.api
from sqlalchemy import create_engine, event
from sqlalchemy.engine import Engine, make_url
from sqlalchemy.pool import NullPool

_engine: Engine | None = None
_open_file = [""]       # the scratch gradebook the engine connects to now (one at a time)


def scratch_engine(path: str) -> Engine:
    """The engine of the scratch gradebook at ``path``: the process's one scratch engine,
    connecting from now on to ``path``. Connections are not pooled, so none made before a
    fork is used after it."""
    global _engine
    _open_file[0] = path
    if _engine is None:
        _engine = create_engine(
            "sqlite://", poolclass=NullPool, future=True,
            creator=lambda: sqlite3.connect(_open_file[0], check_same_thread=False))
    return _engine


def _file_of(url: str) -> Path | None:
    """The database file of an SQLite URL, else None."""
    parsed = make_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return None
    return Path(parsed.database).resolve()


@contextlib.contextmanager
def scratch_databases(folder: Path) -> Iterator[None]:
    """Meanwhile, SQLite gradebooks opened under ``folder`` are scratch gradebooks (see
    the module's description); every other database is untouched."""
    folder = folder.resolve()
    nbgraders_engine = nbgrader.api.create_engine

    def engine_for(url, *args, **kwargs) -> Engine:
        path = _file_of(str(url))
        if path is not None and path.is_relative_to(folder):
            return scratch_engine(str(path))
        return nbgraders_engine(url, *args, **kwargs)

    def without_sync(connection, _record) -> None:
        if isinstance(connection, sqlite3.Connection):
            files = [row[2] for row in connection.execute("PRAGMA database_list") if row[2]]
            if files and Path(files[0]).resolve().is_relative_to(folder):
                connection.execute("PRAGMA synchronous = OFF")
                connection.execute("PRAGMA journal_mode = MEMORY")

    event.listen(Engine, "connect", without_sync)
    nbgrader.api.create_engine = engine_for
    try:
        yield
    finally:
        nbgrader.api.create_engine = nbgraders_engine
        event.remove(Engine, "connect", without_sync)
