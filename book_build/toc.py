"""The book's pages as ``_toc.yml`` lists them, in reading order, and which are notebooks.

Shared by the build (``execute_notebooks.py``) and the tests (``tests/conftest.py``).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import yaml


def toc_pages(root: Path) -> list[str]:
    """Every page of ``root/_toc.yml`` (names without suffix), in reading order."""
    toc = yaml.safe_load((root / "_toc.yml").read_text())

    def walk(entries: list[dict]) -> Iterator[str]:
        for entry in entries:
            if "file" in entry:
                yield entry["file"]
            yield from walk(entry.get("sections", []))

    return [toc["root"], *[page for part in toc.get("parts", [])
                           for page in walk(part["chapters"])]]


def is_notebook(path: Path) -> bool:
    """Whether a page is a notebook: an ``.ipynb``, or MyST Markdown that declares a kernel."""
    if path.suffix == ".ipynb":
        return True
    text = path.read_text()
    return text.startswith("---") and "kernelspec" in text.split("---", 2)[1]
