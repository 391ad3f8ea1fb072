"""A tiny Sphinx project per behaviour of one of the book's extensions, built in-process
with Sphinx's own test application (``sphinx.testing``): no whole-site build, no
``sys.path`` edits (the extensions are modules of the installed ``book_build``)."""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook, new_output
from sphinx.testing.util import SphinxTestApp

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8/5+hHgAHggJ/"
       "PchI7wAAAABJRU5ErkJggg==")


@dataclass
class Built:
    """A built project: its output folder, what Sphinx printed, its status."""

    app: SphinxTestApp
    outdir: Path
    warnings: str
    error: Exception | None

    def page(self, name: str) -> str:
        return (self.outdir / f"{name}.html").read_text()


def notebook(title: str, outputs: list[dict] = (), text: str = "A sentence.",
             cell_metadata: dict | None = None) -> str:
    """An executed notebook page (JSON): a titled section, a sentence, a code cell with
    ``outputs`` (and ``cell_metadata``)."""
    cell = new_code_cell("plot()", execution_count=1, metadata=cell_metadata or {})
    cell.outputs = [new_output(**output) for output in outputs]
    page = new_notebook(cells=[new_markdown_cell(f"# {title}\n\n{text}"), cell],
                        metadata={"kernelspec": {"name": "python3", "language": "python",
                                                 "display_name": "Python 3"}})
    return json.dumps(page)


def png_output() -> dict:
    return {"output_type": "display_data", "data": {"image/png": PNG, "text/plain": "<Figure>"}}


@pytest.fixture
def build(tmp_path):
    """build(files, extensions=[...], builder="html", setup="", **settings) -> Built:
    write ``files`` ({path: text}) and a ``conf.py`` of the settings (and the code
    ``setup``) into a project, and build it."""
    apps = []

    def _build(files: dict[str, str], extensions: list[str], builder: str = "html",
               setup: str = "", **settings) -> Built:
        source = tmp_path / "project"
        for name, text in files.items():
            path = source / name
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text) if isinstance(text, bytes) else path.write_text(text)
        conf = {"extensions": extensions, "exclude_patterns": ["_build"], **settings}
        (source / "conf.py").write_text("".join(f"{key} = {value!r}\n"
                                                for key, value in conf.items()) + setup)
        warnings = io.StringIO()
        app = SphinxTestApp(builder, srcdir=source, status=io.StringIO(), warning=warnings)
        apps.append(app)
        error = None
        try:
            app.build()
        except Exception as raised:      # noqa: BLE001 - a test looks at the build's error
            error = raised
        return Built(app, Path(app.outdir), warnings.getvalue(), error)

    yield _build
    for app in apps:
        app.cleanup()
