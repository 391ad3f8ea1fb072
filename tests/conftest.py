"""Shared fixtures: scratch course directories built from this repository's sources."""

from __future__ import annotations

import fcntl
import functools
import hashlib
import html
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import nbformat
import pytest

from autograder.commands.release import release
from autograder.course import Course
from autograder.proving.fill import fill_release
from book_build import toc as book_toc
from book_build.pdf import CHROMIUM, CHROMIUM_ARGS  # Debian's, driven by Playwright

REPO = Path(__file__).resolve().parent.parent


def pytest_configure(config) -> None:
    """Each of pytest-xdist's workers computes on its share of the cores, as the book's
    executor and the grader's workers do: torch's default is every core, and two workers
    each spinning two threads on two cores ran the seq2seq dry runs 2.3 times slower
    (115 s against 51 s for 51 of them). What a test starts (a grading, a build, a kernel)
    sets its own threads."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    if workers > 1:
        import torch

        torch.set_num_threads(max(1, (os.cpu_count() or 1) // workers))


# The book's tests that only read the built site, in a group of their own, beside the group
# "book" that builds it and reads the rest: under `--dist loadgroup` another worker runs
# them, and waits for the build (the ``site`` fixture builds it once for every worker,
# under a lock).
READING_BOOK_GROUP = "book-reading"


# Implementations written apart from the solution, from the contract alone:
# independent/<assignment>/mutants/*.py must lose marks, variants/*.py earn full marks.
INDEPENDENT = REPO / "tests" / "independent"


def independent(assignment: str, kind: str | None = None) -> list[Path]:
    """The independent ``kind`` ("mutant", "variant"; default: both) modules of ``assignment``."""
    kinds = [kind] if kind else ["mutant", "variant"]
    return [path for k in kinds
            for path in sorted((INDEPENDENT / assignment / f"{k}s").glob("*.py"))]


def tested(outcome) -> tuple[float, float]:
    """(score, max_score) of the cells an outcome's tests grade: the written answers are
    graded by hand, never by the machine (they await a person's grade)."""
    cells = [c for c in outcome.cells if c.graded_by == "tests"]
    return sum(c.score for c in cells), sum(c.max_score for c in cells)


def full_marks(outcome) -> bool:
    """Whether a submission earned every point the tests give, and nothing by hand yet."""
    score, max_score = tested(outcome)
    return score == max_score and not any(c.score for c in outcome.cells
                                          if c.graded_by != "tests")


def is_variant(module: Path) -> bool:
    """Whether an independent module is a correct implementation (else a wrong one)."""
    return module.parent.name == "variants"
ASSIGNMENT = "attention-scoring"


def make_course(root: Path, assignments: list[str] = (ASSIGNMENT,)) -> Course:
    """A scratch course with the given assignments' sources and their notebooks' catalogues
    (locales/<lang>/LC_MESSAGES/exercises/<assignment>/), released: English and translated."""
    course = Course.at(root)
    for assignment in assignments:
        shutil.copytree(REPO / "solutions" / assignment, course.source / assignment,
                        ignore=shutil.ignore_patterns("*.ipynb", ".ipynb_checkpoints"))
        for catalogues in sorted(REPO.glob(f"locales/*/LC_MESSAGES/exercises/{assignment}")):
            shutil.copytree(catalogues, course.root / catalogues.relative_to(REPO),
                            ignore=shutil.ignore_patterns("*.mo"))
    release(course, list(assignments))
    return course


@pytest.fixture(scope="session")
def released(tmp_path_factory) -> Course:
    """A released scratch course, shared read-only by the tests of a session."""
    return make_course(tmp_path_factory.mktemp("released"))


@pytest.fixture
def course(tmp_path) -> Course:
    """A fresh released scratch course for a test that grades or writes."""
    return make_course(tmp_path / "course")


def notebooks(course: Course, assignment: str = ASSIGNMENT) -> tuple[nbformat.NotebookNode,
                                                                    nbformat.NotebookNode]:
    """(release, source) notebooks of a one-notebook assignment."""
    release_nb = nbformat.read(course.release / assignment / f"{assignment}.ipynb", as_version=4)
    source_nb = nbformat.read(course.source / assignment / f"{assignment}.ipynb", as_version=4)
    return release_nb, source_nb


def submit(course: Course, student: str, notebook: nbformat.NotebookNode | str | None,
           assignment: str = ASSIGNMENT) -> Path:
    """Put a submission into ``submitted/<student>/<assignment>/`` (text = raw file content)."""
    folder = course.submitted / student / assignment
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{assignment}.ipynb"
    if isinstance(notebook, str):
        path.write_text(notebook)
    elif notebook is not None:
        nbformat.write(notebook, path)
    return path


def filled(course: Course, code: str | None = None,
           assignment: str = ASSIGNMENT) -> nbformat.NotebookNode:
    """The release of ``assignment`` answered with ``code`` (default: the reference)."""
    release_nb, source_nb = notebooks(course, assignment)
    return fill_release(release_nb, source_nb, code)


def run_cli(course: Course, *args: str, timeout: int = 900,
            env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """Run ``python -m autograder --root COURSE ARGS`` as an instructor would (``env``: the
    environment, if not this one)."""
    return subprocess.run([sys.executable, "-m", "autograder", "--root", str(course.root), *args],
                          capture_output=True, text=True, timeout=timeout, cwd=REPO, check=False,
                          env=env)


def stop_group(process: subprocess.Popen) -> None:
    """Stop a server started in a session of its own, with everything it started: SIGTERM
    to its process group, SIGKILL if it has not ended 30 s later."""
    os.killpg(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=30)
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        process.wait()


def visible_text(page: str) -> str:
    """The text of an HTML page with tags removed: highlighted code reads as written."""
    return html.unescape(re.sub(r"<[^>]+>", "", page))


# The website, built once per test session and shared by tests/book/test_book.py and
# tests/book/test_browser.py (both in the xdist group "book", so one worker builds it).
# BOOK_PATH_OUTPUT builds elsewhere than the repository's own _build/ (jupyter-book's
# --path-output), e.g. while another build uses it.
BOOK_OUTPUT = Path(os.environ.get("BOOK_PATH_OUTPUT", REPO))
# Screenshots the browser tests take for review (git-ignored with the rest of _build/).
SCREENSHOTS = BOOK_OUTPUT / "_build" / "screenshots"

# Warnings a build may print that say nothing about the book:
EXPLAINED_WARNINGS = [
    # ipykernel 7 says so whenever a notebook is executed by a local kernel over loopback TCP.
    "[IPKernelApp] WARNING | Kernel is running over TCP without encryption",
]


@pytest.fixture(scope="session")
def site() -> Path:
    """Build the book as `make book` does: the notebooks executed two at a time into the
    cache (python -m book_build.execute), then jupyter-book (outputs cached between builds).

    The build must succeed without an unexplained warning; `nitpicky` in _config.yml makes a
    cross-reference that does not resolve one. Each step's output and duration are kept in
    ``_build/test-logs/`` (what a slow session rebuilt, and why).
    """
    logs = BOOK_OUTPUT / "_build" / "test-logs"
    logs.mkdir(parents=True, exist_ok=True)
    # One build for all of a session's workers: the first to come builds, the others wait
    # for it and read what it built.
    with (logs / "site.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _built_site(logs)


def _built_site(logs: Path) -> Path:
    built = BOOK_OUTPUT / "_build" / "html"
    stamp, inputs = logs / "site.inputs", _book_inputs()
    if (inputs and stamp.is_file() and stamp.read_text() == inputs
            and (built / "index.html").is_file() and (built / "zh" / "index.html").is_file()):
        return built         # built and checked from these very inputs (make test, then test-full)
    stamp.unlink(missing_ok=True)
    started = time.monotonic()
    executed = subprocess.run([sys.executable, "-m", "book_build.execute",
                               "--jobs", "2", "--output-root", str(BOOK_OUTPUT)],
                              capture_output=True, text=True, timeout=1800, check=False)
    _keep_log(logs / "execute.log", executed, started)
    assert executed.returncode == 0, executed.stdout[-3000:] + executed.stderr[-3000:]
    started = time.monotonic()      # each edition's PDF, which its website serves
    printed = subprocess.run([sys.executable, "-m", "book_build.pdf", "--jobs", "2",
                              "--output-root", str(BOOK_OUTPUT)],
                             capture_output=True, text=True, timeout=1800, check=False,
                             env={**os.environ, "CHROMIUM": str(CHROMIUM)})
    _keep_log(logs / "pdf.log", printed, started)
    assert printed.returncode == 0, printed.stdout[-3000:] + printed.stderr[-3000:]
    assert_read_only_the_cache(printed, "the PDFs' build executed notebooks (it must read the "
                               "website's cache)")
    jupyter_book = Path(sys.executable).parent / "jupyter-book"
    command = [str(jupyter_book), "build", str(REPO), "--builder", "html"]
    if BOOK_OUTPUT != REPO:
        command += ["--path-output", str(BOOK_OUTPUT)]
    started = time.monotonic()
    result = subprocess.run(command, capture_output=True, text=True, timeout=1800, check=False)
    _keep_log(logs / "html.log", result, started)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert_read_only_the_cache(result, "jupyter-book executed notebooks that "
                               "book_build.execute had cached (the cache did not recognise them)")
    # The Chinese site, from the same pages and the same cached outputs (make book's last step).
    started = time.monotonic()
    translated = subprocess.run([sys.executable, "-m", "book_build.translate",
                                 "build", "--language", "zh_CN",
                                 "--output-root", str(BOOK_OUTPUT)],
                                capture_output=True, text=True, timeout=1800, check=False)
    _keep_log(logs / "zh_CN.log", translated, started)
    assert translated.returncode == 0, translated.stdout[-3000:] + translated.stderr[-3000:]
    assert_read_only_the_cache(translated, "the Chinese build executed notebooks (it must read "
                               "the English build's cache)")
    if inputs:
        stamp.write_text(inputs)
    return built


def _book_inputs() -> str | None:
    """A digest of every file the site is built from, as git sees the working tree (tracked
    and untracked, not ignored; the tests except this module left out), with the Python that
    builds it; None outside a git checkout. ``site`` reuses a build whose inputs were these."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=REPO, capture_output=True, check=False)
    if listed.returncode != 0:
        return None
    digest = hashlib.sha256(sys.version.encode())
    for name in sorted(set(listed.stdout.decode().split("\0")) - {""}):
        path = REPO / name
        if (name.startswith("tests/") and name != "tests/conftest.py") or not path.is_file():
            continue
        digest.update(name.encode() + b"\0" + hashlib.sha256(path.read_bytes()).digest())
    return digest.hexdigest()


def _keep_log(path: Path, step: subprocess.CompletedProcess, started: float) -> None:
    path.write_text(f"{shlex.join(map(str, step.args))}\nexit {step.returncode} after "
                    f"{time.monotonic() - started:.0f} s\n\n{step.stdout}\n{step.stderr}")


def assert_read_only_the_cache(build: subprocess.CompletedProcess, executed: str) -> None:
    """A build printed no unexplained warning and executed no notebook: every notebook was
    executed ahead, in parallel, and the build only read the cache (else ``executed``)."""
    warnings = [line for line in (build.stdout + build.stderr).splitlines()
                if "WARNING" in line and not any(ok in line for ok in EXPLAINED_WARNINGS)]
    assert not warnings, "\n".join(warnings)
    executed_by_the_build = [line for line in build.stdout.splitlines()
                             if "Executed notebook in" in line]
    assert not executed_by_the_build, f"{executed}:\n" + "\n".join(executed_by_the_build)


@functools.cache
def pdf_text(path: Path) -> tuple[str, ...]:
    """The text of each page of a PDF (pypdf), read once a session: the site's PDFs are read
    by tests/book/test_pdf.py and tests/book/test_book.py (what they must not show)."""
    from pypdf import PdfReader

    return tuple(page.extract_text() for page in PdfReader(path).pages)


def cached_figures() -> Iterator[tuple[str, nbformat.NotebookNode, nbformat.NotebookNode]]:
    """(page, code cell, output) of every figure of the executed book, from the cache the
    ``site`` fixture's build filled."""
    from jupyter_cache import get_cache

    from book_build.execute import book_pages, read_notebook

    cache = get_cache(str(BOOK_OUTPUT / "_build" / ".jupyter_cache"))
    for path in book_pages(REPO):
        record = cache.match_cache_notebook(read_notebook(path))
        for cell in cache.get_cache_bundle(record.pk).nb.cells:
            for output in cell.get("outputs", []):
                if "image/png" in output.get("data", {}):
                    yield str(path.relative_to(REPO)), cell, output


@pytest.fixture(scope="session")
def browser():
    """A headless Chromium (each context a fresh profile) for the tests of a session."""
    from playwright.sync_api import sync_playwright

    if not CHROMIUM.exists():
        pytest.fail(f"no Chromium at {CHROMIUM}: `make browser-tools` installs Debian's "
                    "(apt-get install chromium), or set CHROMIUM to another one")
    with sync_playwright() as playwright:
        chromium = playwright.chromium.launch(executable_path=str(CHROMIUM),
                                              args=CHROMIUM_ARGS, headless=True)
        yield chromium
        chromium.close()


def toc_pages() -> list[str]:
    """Every page of `_toc.yml`, in reading order (as the build reads it)."""
    return book_toc.toc_pages(REPO)


def is_notebook(path: Path) -> bool:
    """Whether a page is a notebook (as the build decides)."""
    return path.exists() and book_toc.is_notebook(path)
