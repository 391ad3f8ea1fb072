"""Sphinx extension: a page is read again when its cached outputs are newer than the page.

Sphinx reads a page again when its source changed; MyST-NB then takes its outputs from the
jupyter cache. But :mod:`book_build.execute` also executes pages whose source did not
change: those whose figures' translations are out of date (``figures.po`` changed, see
:mod:`book_build.figures.translation`). Without this extension an incremental build,
English or Chinese, would keep showing their old outputs. It adds to Sphinx's outdated
documents every notebook page whose cache record was written after the page was last read.

In a translated build, the tables a page's code prints are translated while the page is
read (:class:`book_build.figures.render.TranslatedMarkdown`), from the figures' catalogue:
a notebook page is read again, too, when that catalogue changed after it was last read.
"""

from __future__ import annotations

import datetime
import filecmp
from pathlib import Path

from sphinx.application import Sphinx
from sphinx.environment import BuildEnvironment

from ..figures.translation import CATALOGUE


def _microseconds(moment: datetime.datetime) -> int:
    """A cache record's time (naive UTC, as SQLite returns it) in Sphinx's unit."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=datetime.UTC)
    return int(moment.timestamp() * 1_000_000)


def pages_with_newer_outputs(app: Sphinx, env: BuildEnvironment, added: set[str],
                             changed: set[str], removed: set[str]) -> list[str]:
    from jupyter_cache import get_cache

    config = getattr(env, "mystnb_config", None)
    if config is None or not config.execution_cache_path \
            or not Path(config.execution_cache_path).is_dir():
        return []
    newer = []
    for record in get_cache(config.execution_cache_path).list_cache_records():
        docname = env.path2doc(record.uri) if record.uri else None
        if docname is None or docname in added or docname in changed:
            continue
        read = env.all_docs.get(docname)
        if read is not None and _microseconds(record.created) > read:
            newer.append(docname)
    return newer


def pages_with_newer_figure_catalogue(app: Sphinx, env: BuildEnvironment, added: set[str],
                                      changed: set[str], removed: set[str]) -> list[str]:
    language = app.config.language or "en"
    if language.split("_")[0] == "en":
        return []
    catalogues = [Path(app.srcdir, folder, language, "LC_MESSAGES", CATALOGUE)
                  for folder in app.config.locale_dirs]
    changed_at = max((int(path.stat().st_mtime * 1_000_000) for path in catalogues
                      if path.is_file()), default=None)
    if changed_at is None:
        return []
    return [docname for docname, read in env.all_docs.items()
            if docname not in added and docname not in changed and read < changed_at
            and env.metadata.get(docname, {}).get("kernelspec") is not None]


def changed_static_files(app: Sphinx, env: BuildEnvironment, added: set[str],
                         changed: set[str], removed: set[str]) -> list[str]:
    if app.builder.format != "html" or added or changed:
        return []
    static = Path(app.outdir) / "_static"
    for folder in app.config.html_static_path:
        source = Path(app.confdir, folder)
        for path in source.rglob("*") if source.is_dir() else []:
            copy = static / path.relative_to(source)
            if path.is_file() and not (copy.exists() and filecmp.cmp(path, copy, shallow=False)):
                return [app.config.root_doc]
    return []


def setup(app: Sphinx) -> dict:
    app.connect("env-get-outdated", pages_with_newer_outputs)
    app.connect("env-get-outdated", pages_with_newer_figure_catalogue)
    app.connect("env-get-outdated", changed_static_files)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
