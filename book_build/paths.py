"""Where the book's build finds things: the repository, its catalogues, its build folder."""

from __future__ import annotations

from pathlib import Path

from autograder.course.languages import LOCALES_DIR

ROOT = Path(__file__).resolve().parent.parent
"""The repository: ``_config.yml``, ``_toc.yml`` and the pages."""
LOCALES = ROOT / LOCALES_DIR
"""The gettext catalogues of every translated page, figure and exercise."""


def build_folder(output_root: Path = ROOT) -> Path:
    """``_build/`` of a build whose output root is ``output_root`` (Jupyter Book's
    ``--path-output``): the English site, the translated sites' builds, the cache."""
    return Path(output_root) / "_build"


def cache_folder(output_root: Path = ROOT) -> Path:
    """The jupyter-cache the build reads every notebook's outputs from."""
    return build_folder(output_root) / ".jupyter_cache"
