"""Sphinx extension: serve MathJax 3 from the built site instead of a CDN.

The book must render its formulas offline (on a course machine without internet, or a
student's laptop on a train). MathJax 3.2.2 comes from the PyPI package
``django-static-mathjax`` (found as the grader's pages find it,
:func:`autograder.display.mathjax.mathjax_root`); this extension copies the one combined
component the book uses (TeX input, CommonHTML output) and its web fonts into
``_static/mathjax/``. Point Sphinx at it with ``mathjax_path: mathjax/tex-mml-chtml.js``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from sphinx.application import Sphinx

from autograder.display.mathjax import mathjax_root

COMPONENT = "tex-mml-chtml.js"
FONTS = Path("output") / "chtml" / "fonts" / "woff-v2"


def copy_mathjax(app: Sphinx, exception: Exception | None) -> None:
    if exception is not None or app.builder.format != "html":
        return
    source, target = mathjax_root(), Path(app.outdir) / "_static" / "mathjax"
    target.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source / COMPONENT, target / COMPONENT)
    shutil.copytree(source / FONTS, target / FONTS, dirs_exist_ok=True)


def setup(app: Sphinx) -> dict:
    app.connect("build-finished", copy_mathjax)
    return {"parallel_read_safe": True, "parallel_write_safe": True}
