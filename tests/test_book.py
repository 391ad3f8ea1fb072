"""The website: builds with Jupyter Book 1, has every part, and gives nothing away."""

from __future__ import annotations

import re

import pytest

from autograder.course import Course
from autograder.release import assignment_secrets, find_leaks

from .conftest import ASSIGNMENT, REPO, visible_text

# One worker builds the book: two parallel builds would race on the same `_build/` cache.
# (The `site` fixture, in conftest.py, builds it once for this file and test_browser.py.)
pytestmark = pytest.mark.xdist_group("book")

PAGES = ["book/intro", "book/overview/index", "book/traditional/index",
         "book/traditional/attention-module", f"exercises/{ASSIGNMENT}/{ASSIGNMENT}",
         "book/encoder/index", "book/appendix/instructors", "book/appendix/references"]


def test_every_page_of_the_toc_is_built(site):
    for page in PAGES:
        assert (site / f"{page}.html").exists(), page


def test_no_solution_or_hidden_test_anywhere_in_the_site(site):
    course = Course.at(REPO)
    secrets = set().union(*(assignment_secrets(course, a) for a in course.assignments()))
    assert "def ref_masked_softmax(scores, mask=None):" in secrets
    for path in site.rglob("*"):
        if not path.is_file() or path.suffix not in {".html", ".ipynb", ".txt", ".md", ".py",
                                                     ".js", ".json"}:
            continue
        raw = path.read_text(errors="replace")
        text = visible_text(raw) if path.suffix == ".html" else raw
        assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text, path
        leaked = find_leaks(secrets, text.splitlines())
        assert not leaked, f"{path} shows {leaked[:2]}"
    assert not [p for p in site.rglob("*") if "solutions" in p.relative_to(site).parts]


def test_the_attention_module_page_has_math_and_figures(site):
    page = (site / "book/traditional/attention-module.html").read_text()
    assert "mathjax" in page.lower() and 'class="math' in page
    images = re.findall(r'<img[^>]+src="([^"]+)"', page)
    assert len(images) >= 2, "the heatmaps should be on the page"
    for src in images:
        if not src.startswith(("http", "data:")):
            assert (site / "book/traditional" / src).resolve().exists(), src


def test_exercise_page_is_unexecuted_and_downloadable(site):
    page = (site / f"exercises/{ASSIGNMENT}/{ASSIGNMENT}.html").read_text()
    assert "NotImplementedError" in page
    assert 'class="output' not in page, "exercise pages are rendered without outputs"
    assert f"{ASSIGNMENT}.ipynb" in page, "the page offers the notebook for download"
    download = site / "_sources" / "exercises" / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
    assert download.exists()
    assert "### BEGIN" not in download.read_text()
