"""The website: builds with Jupyter Book 1, has every part, and gives nothing away."""

from __future__ import annotations

import itertools
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path
from urllib.parse import unquote

import jupytext
import nbformat
import pytest
import yaml
from bs4 import BeautifulSoup
from PIL import Image

from autograder.commands.release import assignment_secrets, find_leaks
from autograder.course import Course
from autograder.course.languages import language as words
from book_build.figures import legibility
from book_build.student_package import pinned_requirements, version, wheel_name
from tests.conftest import (
    ASSIGNMENT,
    REPO,
    assert_read_only_the_cache,
    cached_figures,
    is_notebook,
    pdf_text,
    toc_pages,
    visible_text,
)

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
    files = {path: path.read_bytes() for path in site.rglob("*") if path.is_file()}
    # the course's package (book_build/student_package.py), file by file
    wheels = [path for path in files if path.suffix == ".whl"]
    assert len(wheels) == 2, wheels       # one in each language's site
    for wheel in wheels:
        with zipfile.ZipFile(wheel) as archive:
            files |= {wheel / name: archive.read(name) for name in archive.namelist()}
    assert any(path.name == "multihead.py" for path in files)
    # each edition's PDF (book_build/pdf.py), as its text
    pdfs = [path for path in files if path.suffix == ".pdf"]
    assert len(pdfs) == 2, pdfs
    for path in pdfs:
        files[path.with_suffix(".pdf.txt")] = "\n".join(pdf_text(path)).encode()
    for path, content in files.items():
        if path.suffix not in {".html", ".ipynb", ".txt", ".md", ".py", ".js", ".json"}:
            continue
        raw = content.decode(errors="replace")
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


def _numbered_parts() -> list[tuple[str, list[str]]]:
    """(landing page, its sections) of every numbered part of _toc.yml, in order."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    parts = []
    for part in toc["parts"]:
        if part.get("numbered"):
            for chapter in part["chapters"]:
                parts.append((chapter["file"], [s["file"] for s in chapter.get("sections", [])]))
    return parts


def _number(site, page: str) -> str:
    html = (site / f"{page}.html").read_text()
    found = re.search(r'<h1>\s*<span class="section-number">([\d.]+)\s*</span>', html)
    return found.group(1) if found else ""


def test_every_part_numbers_its_chapters_from_one(site):
    """Part P's landing page is P., its chapters P.1, P.2, ... in order (a landing page's
    own headings would be numbered first and shift its chapters)."""
    for index, (landing, sections) in enumerate(_numbered_parts(), start=1):
        numbers = [_number(site, page) for page in [landing, *sections]]
        assert numbers == [f"{index}."] + [f"{index}.{k}." for k in
                                           range(1, len(sections) + 1)], (landing, numbers)


EXERCISE = re.compile(r"^(\d+)\. ", re.M)


def test_every_end_of_page_exercise_has_a_hint_and_a_worked_solution():
    counted = 0
    for page in sorted((REPO / "book").rglob("*.md")):
        text = page.read_text()
        if "\n## Exercises\n" not in text:
            continue
        section = text.split("\n## Exercises\n", 1)[1].split("\n## ", 1)[0]
        starts = [m.start() for m in EXERCISE.finditer(section)] + [len(section)]
        items = [section[a:b] for a, b in itertools.pairwise(starts)]
        assert items, page
        for number, item in enumerate(items, start=1):
            assert item.startswith(f"{number}. "), f"{page.name}: exercise {number} misnumbered"
            assert ":::{dropdown} Hint" in item, f"{page.name}: exercise {number} has no hint"
            assert ":::{dropdown} Solution" in item, \
                f"{page.name}: exercise {number} has no worked solution"
            counted += 1
    assert counted >= 65, counted


def test_solutions_are_in_the_built_pages_folded_away(site):
    page = (site / "book/overview/weighted-sum.html").read_text()
    assert page.count("Solution") >= 5
    assert 'class="sd-summary-title' in page or "<details" in page


@pytest.mark.full
def test_once_a_service_is_set_every_executable_page_can_be_launched(site, tmp_path):
    """The same book with a repository and Binder and JupyterHub URLs set in _config.yml:
    every notebook page offers both launchers, an exercise opens its folder of the student
    release, and the introduction tells students about the rocket.

    Built from the session's build (its read pages, its executed notebooks, the cache
    they came from and its PDFs) into a new output folder: the changed configuration makes
    Sphinx write every page again, and nothing is executed."""
    config = yaml.safe_load((REPO / "_config.yml").read_text())
    repository = "https://github.com/attention-course-tests/attention-in-nlp"
    config["repository"]["url"] = repository
    config["launch_buttons"].update(binderhub_url="https://mybinder.org",
                                    jupyterhub_url="https://hub.attention-course-tests.org")
    (tmp_path / "_config.yml").write_text(yaml.safe_dump(config, sort_keys=False))
    built = site.parent
    for folder in (".doctrees", "jupyter_execute"):
        shutil.copytree(built / folder, tmp_path / "_build" / folder, symlinks=True)
    for folder in (".jupyter_cache", "pdf"):     # the site serves the PDFs made beside it
        (tmp_path / "_build" / folder).symlink_to(built / folder)
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    result = subprocess.run([str(jupyter_book), "build", str(REPO), "--builder", "html",
                             "--config", str(tmp_path / "_config.yml"),
                             "--path-output", str(tmp_path)],
                            capture_output=True, text=True, timeout=1800, check=False)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_read_only_the_cache(result, "the build with launch buttons executed notebooks")
    site = tmp_path / "_build" / "html"
    intro = visible_text((site / "book/intro.html").read_text())
    assert "rocket" in intro
    executable = [page for page in toc_pages() if page.startswith("exercises/")
                  or is_notebook(REPO / f"{page}.md")]
    assert len(executable) >= 15
    for page in executable:
        html = (site / f"{page}.html").read_text()
        links = re.findall(r'href="(https://(?:mybinder\.org|hub\.attention-course-tests)[^"]+)"',
                           html)
        assert len(links) == 2, (page, links)
        for link in links:
            assert "attention-in-nlp" in unquote(link), link
            if page.startswith("exercises/"):
                assert f"exercises/{page.split('/')[1]}/" in unquote(link), link
            assert "solutions" not in unquote(link), link


def test_every_reference_links_to_the_work_under_a_clean_label(site):
    """Each entry of the references page has a link (DOI or URL) and a label made of the
    authors' initials and the year, with no TeX accent left in it (``[VCC+18]``)."""
    for language in ("", "zh/"):
        page = (site / f"{language}book/appendix/references.html").read_text()
        entries = re.findall(r'<div class="citation"[^>]*>(.*?)</div>', page, re.DOTALL)
        assert len(entries) >= 30, language
        for entry in entries:
            label = re.search(r'class="label"><span class="fn-bracket">\[</span>([^<]*)<',
                              entry).group(1)
            assert re.fullmatch(r"[A-Z][A-Za-z]{0,5}\+?\d\d", label), label
            assert re.search(r'<a class="reference external" href="https?://', entry), label


def test_each_part_overview_links_every_page_of_its_part_under_its_sidebar_number(site):
    """A part's overview names its chapters with the numbers the sidebar gives them and
    links each chapter and exercise of the part."""
    toc = yaml.safe_load((REPO / "_toc.yml").read_text())
    for number, part in enumerate([p for p in toc["parts"] if p.get("numbered")], start=1):
        overview = part["chapters"][0]
        page = (site / f"{overview['file']}.html").read_text()
        main = page[page.index("<main"):page.index("</main>")]
        here = Path(overview["file"]).parent
        for section in overview["sections"]:
            href = os.path.relpath(section["file"], here)
            assert f'href="{href}.html' in main, f"{overview['file']} does not link {href}"
        steps = re.findall(r"<strong>(\d+(?:\.\d+)?) ·", main)
        assert all(step.startswith(f"{number}.") for step in steps), (overview["file"], steps)


def test_no_image_alt_text_is_broken_across_lines():
    """Markdown joins the lines of an image's alt text without a space ("previousstate"),
    so each alt text is written on one line, in the book and in the assignments."""
    sources = [*(REPO / "book").rglob("*.md"), *(REPO / "solutions").glob("*/*.py")]
    broken = [f"{path.relative_to(REPO)}: {match.group()[:60]!r}" for path in sources
              for match in re.finditer(r"!\[[^\]]*\n[^\]]*\]\(", path.read_text())]
    assert not broken, broken


def test_the_front_page_tab_names_the_site_once(site):
    page = (site / "book/intro.html").read_text()
    assert "<title>Attention in NLP</title>" in page
    assert 'logo__title">Attention in NLP<' in page
    assert "<title>Glossary · 术语表 &#8212; Attention in NLP</title>" in \
        (site / "book/appendix/glossary.html").read_text()


def test_no_sentence_of_a_model_answer_is_in_the_site(site):
    """The book must not answer a graded written question: no sentence of a model answer
    or rubric (40 characters or more) appears in any page, in any words' wrapping."""
    from autograder.commands.release import source_notebooks

    course = Course.at(REPO)
    sentences = set()
    for assignment in course.assignments():
        for source in source_notebooks(course, assignment):
            for cell in source.cells:
                meta = cell.metadata.get("nbgrader", {})
                if cell.cell_type == "markdown" and meta.get("solution"):
                    text = " ".join(cell.source.replace("**", "").split())
                    sentences |= {s.strip() for s in re.split(r"(?<=[.!?])\s+", text)
                                  if len(s.strip()) >= 40}
    assert len(sentences) > 20
    for path in site.rglob("*.html"):
        text = " ".join(visible_text(path.read_text()).replace("**", "").split())
        shown = [s for s in sentences if s in text]
        assert not shown, f"{path.relative_to(site)} shows {shown[:2]}"


def _chapters() -> list[str]:
    """The chapter pages: notebooks of the book (the exercises are released notebooks)."""
    return [page for page in toc_pages() if page.startswith("book/")
            and is_notebook(REPO / f"{page}.md")]


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_chapter_downloads_as_a_plain_notebook_in_its_sites_language(site, language):
    root = site if language == "en" else site / "zh"
    chapters = _chapters()
    assert len(chapters) == 15
    attached = {}
    for page in chapters:
        html = (root / f"{page}.html").read_text()
        assert f'href="{Path(page).name}.ipynb"' in html, f"{page}: no .ipynb download"
        notebook = nbformat.read(root / f"{page}.ipynb", as_version=4)
        nbformat.validate(notebook)
        markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
        left = re.findall(r"\{[a-z:-]+\}`[^`]*`|```\{[a-z-]+\}|^\s*:::.*$|^\$\$ \(.*$",
                          markdown, re.M)
        assert not left, f"{page}: Sphinx syntax left in the notebook: {left[:3]}"
        source = jupytext.read(REPO / f"{page}.md")
        assert [c.source for c in notebook.cells if c.cell_type == "code"] == \
            [c.source for c in source.cells if c.cell_type == "code"], page
        assert "\\tag{" in markdown or "$$" not in markdown, page
        letters = [ch for ch in markdown if ch.isalpha()]
        chinese = sum("\u4e00" <= ch <= "\u9fff" for ch in letters) / len(letters)
        # the English pages quote the lecture's Chinese here and there
        assert chinese > 0.4 if language != "en" else chinese < 0.05, (page, chinese)
        assert notebook.metadata.get("language", "en") == language
        for cell in notebook.cells:
            attached.update(cell.get("attachments", {}))
    # the four figures of the mechanism, each in the site's language
    suffix = ".zh_CN.svg" if language != "en" else ".svg"
    assert sorted(attached) == sorted(f"{name}{suffix}" for name in (
        "one-query", "self-attention-matrices", "transformer", "multi-head-attention"))


def test_the_site_serves_the_course_package_the_chapters_import(site):
    name = wheel_name()
    expected = {f"attention_course/{path.name}"
                for path in (REPO / "attention_course").glob("*.py")}
    for root in (site, site / "zh"):
        with zipfile.ZipFile(root / name) as wheel:
            modules = {member for member in wheel.namelist() if member.endswith(".py")}
            metadata = wheel.read(f"attention_course-{version()}.dist-info/METADATA").decode()
        assert modules == expected
        assert "Name: attention-course" in metadata
        requires = [line.split(": ", 1)[1] for line in metadata.splitlines()
                    if line.startswith("Requires-Dist: ")]
        assert requires == pinned_requirements()
        intro = (root / "book" / "intro.html").read_text()
        # the page links the file its commands install
        assert f'href="../{name}"' in intro
        assert f"pip install {name}" in visible_text(intro)


def test_every_figure_s_smallest_text_is_legible_in_the_column(site):
    """Each figure a chapter's code draws, in every language it is drawn in: no text
    Matplotlib drew in it (titles, labels, ticks, legends, numbers in cells) is shown
    smaller than 9 CSS points in the article's column at a desktop width (measured as
    each figure is drawn: book_build.figures.legibility)."""
    assert legibility.SMALLEST_POINTS >= 9
    measured, small = 0, []
    for page, cell, output in cached_figures():
        name = cell.metadata.get("mystnb", {}).get("figure", {}).get("name", "")
        smallest = output.metadata["image/png"][legibility.METADATA_KEY]
        measured += smallest is not None
        if smallest is not None and smallest < legibility.SMALLEST_POINTS:
            small.append(f"{page} {name}: {smallest} pt")
    assert measured >= 60, measured
    assert not small, "\n".join(small)


@pytest.mark.parametrize("language", ["en", "zh_CN"])
def test_every_figure_is_numbered_captioned_described_and_opens_full_size(site, language):
    """Each figure a chapter's code draws: a numbered caption the prose can refer to, alt
    text that describes it (not the build's fallback), twice the pixels it is shown at,
    and a link to its full-size file."""
    root = site if language == "en" else site / "zh"
    fallback = words(language).output_figure
    numbers: list[str] = []
    for page in _chapters():
        html = BeautifulSoup((root / f"{page}.html").read_text(), "html.parser")
        for image in html.select("div.cell_output img"):
            where = f"{page}: {image.get('src')}"
            figure = image.find_parent("figure")
            assert figure is not None, f"{where} is not a figure"
            number = figure.select_one("figcaption .caption-number")
            assert number is not None and re.search(r"\d+\.\d+", number.get_text()), where
            caption = figure.select_one("figcaption .caption-text").get_text().strip()
            assert len(caption) >= 20, f"{where}: caption {caption!r}"
            alt = image.get("alt", "")
            assert not alt.startswith(fallback) and len(alt) >= 40, f"{where}: alt {alt!r}"
            link = image.find_parent("a")
            assert link is not None and link["href"] == image["src"], f"{where}: no link"
            shown = int(re.search(r"width: (\d+)px", image["style"])[1])
            with Image.open(root / page.rsplit("/", 1)[0] / image["src"]) as picture:
                assert abs(picture.width - 2 * shown) <= 2, where
            numbers.append(number.get_text())
    assert len(numbers) >= 60 and len(set(numbers)) == len(numbers), numbers
