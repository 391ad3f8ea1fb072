"""MathJax for pages that show a student's notebook, served by the course, never a CDN.

The formgrader serves these files from its own origin; feedback pages find a copy in
``feedback/_static/`` (:func:`install`). Either way the page's Content-Security-Policy
allows scripts from its own origin only, and :data:`CONFIG` (``static/mathjax-config.js``)
confines MathJax to typesetting: the TeX packages that make links, styles or ids, or load
more code, are left out, and MathJax's ``ui/safe`` extension filters the rest.
"""

from __future__ import annotations

import shutil
from pathlib import Path

STATIC = Path(__file__).resolve().parent / "static"
CONFIG = STATIC / "mathjax-config.js"
# MathJax's combined file: TeX input (every package, some left out by CONFIG), SVG output
# (its glyphs are paths: no font files), and the one extension CONFIG loads beside it.
MAIN = "tex-svg-full.js"
FILES = (MAIN, "ui/safe.js")


def scripts(base: str) -> list[str]:
    """The scripts a page loads, in order, from the folder at URL ``base`` that
    :func:`install` filled (or a server serves alike)."""
    return [f"{base}/{CONFIG.name}", f"{base}/mathjax/{MAIN}"]


def mathjax_root() -> Path:
    """MathJax 3's ES5 components, as the django-static-mathjax package ships them."""
    import mathjax  # django-static-mathjax; only its files are used

    return Path(mathjax.__file__).resolve().parent / "static" / "mathjax" / "es5"


def install(target: Path) -> Path:
    """Copy the configuration and the MathJax files a page needs into ``target``
    (``mathjax-config.js`` and ``mathjax/…``), unless they are there already."""
    files = [(CONFIG, target / CONFIG.name)]
    files += [(mathjax_root() / name, target / "mathjax" / name) for name in FILES]
    for source, copy in files:
        if not copy.exists() or copy.stat().st_size != source.stat().st_size:
            copy.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, copy)
    return target
