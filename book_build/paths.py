"""Where the book's build finds things: the repository, its catalogues, its build folder."""

from __future__ import annotations

from pathlib import Path

from autograder.course.languages import ENGLISH, LOCALES_DIR

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


PDF_NAME = "attention-in-nlp"
"""The file name of the book's PDF (without the edition's language and suffix)."""


def pdf_path(code: str, output_root: Path = ROOT) -> Path:
    """Where :mod:`book_build.pdf` writes the PDF of the edition in ``code``:
    ``_build/pdf/attention-in-nlp.pdf``, ``_build/pdf/attention-in-nlp.zh_CN.pdf``."""
    suffix = "" if code == ENGLISH else f".{code}"
    return build_folder(output_root) / "pdf" / f"{PDF_NAME}{suffix}.pdf"


def output_root_of(path: Path) -> Path:
    """The output root of a build folder or of anything in it (the parent of ``_build``)."""
    for folder in [Path(path), *Path(path).parents]:
        if folder.name == "_build":
            return folder.parent
    raise ValueError(f"{path} is not inside a build folder (_build/)")
