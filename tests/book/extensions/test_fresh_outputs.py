"""book_build.extensions.fresh_outputs: a page whose cached outputs are newer than its
last reading is read again (its source unchanged)."""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import nbformat
from jupyter_cache import get_cache
from jupyter_cache.base import CacheBundleIn

from book_build.extensions.fresh_outputs import changed_static_files, pages_with_newer_outputs


def test_a_page_whose_cached_outputs_are_newer_is_read_again(tmp_path):
    """book_build.extensions.fresh_outputs: book_build.execute re-executes a page whose
    figures' translations changed, its source unchanged; the next build must read it."""
    page = tmp_path / "page.md"
    page.write_text("# A page\n")
    cache = get_cache(str(tmp_path / "cache"))
    notebook = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1")])
    read_before = time.time_ns() // 1_000 - 10_000_000  # read 10 s before it was cached
    cache.cache_notebook_bundle(CacheBundleIn(notebook, str(page)), check_validity=False)
    env = SimpleNamespace(
        mystnb_config=SimpleNamespace(execution_cache_path=str(tmp_path / "cache")),
        path2doc=lambda path: "page" if Path(path) == page else None,
        all_docs={"page": read_before})
    assert pages_with_newer_outputs(None, env, set(), set(), set()) == ["page"]
    env.all_docs["page"] = time.time_ns() // 1_000 + 10_000_000  # read after it was cached
    assert pages_with_newer_outputs(None, env, set(), set(), set()) == []
    assert pages_with_newer_outputs(None, env, set(), {"page"}, set()) == []


def test_a_changed_stylesheet_reaches_the_site_though_no_page_changed(build):
    """Sphinx copies the static files only when it writes a page: a stylesheet edited alone
    would stay stale in an incremental build, but for the extension."""
    files = {"index.rst": "Title\n=====\n\nText.\n", "_static/course.css": "p { color: red; }\n"}
    settings = {"html_static_path": ["_static"]}
    first = build(files, ["book_build.extensions.fresh_outputs"], **settings)
    assert first.error is None
    assert (first.outdir / "_static" / "course.css").read_text() == "p { color: red; }\n"
    files["_static/course.css"] = "p { color: blue; }\n"
    second = build(files, ["book_build.extensions.fresh_outputs"], **settings)
    assert second.error is None
    assert (second.outdir / "_static" / "course.css").read_text() == "p { color: blue; }\n"
    # copies that match their files ask for no page to be read again
    app = second.app
    assert changed_static_files(app, app.env, set(), set(), set()) == []
    (Path(app.srcdir) / "_static" / "course.css").write_text("p { color: green; }\n")
    assert changed_static_files(app, app.env, set(), set(), set()) == ["index"]
