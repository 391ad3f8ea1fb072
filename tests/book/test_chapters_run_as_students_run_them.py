"""A student runs a chapter: the notebook and the course's package downloaded from the site,
installed into a new virtual environment exactly as the page *Running the chapters yourself*
says, and run from top to bottom (make test-full: a new environment takes a minute or two).

The site is served over HTTP on loopback and read as a student reads it: the commands are the
page's own code block, the files are where the page's links and download buttons point.
Only the last command, ``jupyter lab``, is replaced by what its **Run All Cells** does:
``jupyter nbconvert --execute``, in the new environment. The student's home is a new empty
folder (no kernel, no configuration of this machine's user); pip keeps this machine's cache
and configuration, as a student's pip would its own.
"""

from __future__ import annotations

import functools
import http.server
import os
import re
import shlex
import subprocess
import threading
import urllib.request
from pathlib import Path
from urllib.parse import urljoin

import nbformat
import pytest
from bs4 import BeautifulSoup

pytestmark = [pytest.mark.full, pytest.mark.xdist_group("book")]

# one chapter of each part, the third one with the pretrained encoder and the Chinese font
CHAPTERS = ["book/overview/weighted-sum", "book/traditional/attention-module",
            "book/encoder/real-heads"]
SECTION = "intro-run-chapters"


@pytest.fixture(scope="module")
def served(site):
    """The English site on http://127.0.0.1:<port>/."""
    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}/"
    server.shutdown()
    server.server_close()


def _get(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=30) as response:
        return response.read()


def _download(url: str, folder: Path) -> Path:
    target = folder / url.rsplit("/", 1)[1]
    target.write_bytes(_get(url))
    return target


def _instructions(base: str) -> tuple[list[str], str]:
    """The commands of the section *Running the chapters yourself* and the URL of the file
    it links to, read from the intro page."""
    page_url = urljoin(base, "book/intro.html")
    page = BeautifulSoup(_get(page_url), "html.parser")
    section = page.find(id=SECTION)
    assert section is not None, f"no #{SECTION} on the intro page"
    code = section.find_next("div", class_="highlight-bash")
    commands = [line.strip() for line in code.get_text().splitlines() if line.strip()]
    wheel = section.find_next("a", href=re.compile(r"\.whl$"))
    return commands, urljoin(page_url, wheel["href"])


def _notebook_url(base: str, page: str) -> str:
    """Where the page's download button for the notebook points."""
    page_url = urljoin(base, f"{page}.html")
    html = BeautifulSoup(_get(page_url), "html.parser")
    links = [a for a in html.find_all("a", href=True) if a["href"].endswith(".ipynb")
             and ".ipynb" in a.get_text()]
    assert len(links) == 1, f"{page}: {len(links)} .ipynb download buttons"
    return urljoin(page_url, links[0]["href"])


def test_a_downloaded_chapter_runs_in_an_environment_set_up_as_the_page_says(served, tmp_path):
    commands, wheel_url = _instructions(served)
    assert commands[-1] == "jupyter lab", commands
    assert any(command.startswith("pip install ") for command in commands), commands
    folder = tmp_path / "course"
    home = tmp_path / "home"
    folder.mkdir()
    home.mkdir()
    wheel = _download(wheel_url, folder)
    assert f"pip install {wheel.name}" in commands
    notebooks = [_download(_notebook_url(served, page), folder) for page in CHAPTERS]

    environment = {key: value for key, value in os.environ.items()
                   if not key.startswith(("VIRTUAL_ENV", "PYTHON", "JUPYTER", "MPL"))}
    environment["PIP_CACHE_DIR"] = os.environ.get(
        "PIP_CACHE_DIR", str(Path.home() / ".cache" / "pip"))
    environment["HOME"] = str(home)
    environment["PATH"] = os.pathsep.join(
        p for p in os.environ["PATH"].split(os.pathsep) if "/.venv/" not in p + "/")
    setup = "set -e\n" + "\n".join(commands[:-1]) + "\n"
    installed = subprocess.run(["bash", "-c", setup], cwd=folder, env=environment,
                               capture_output=True, text=True, timeout=1800, check=False)
    assert installed.returncode == 0, installed.stdout[-3000:] + installed.stderr[-3000:]

    activate = next(c for c in commands if c.startswith("source "))
    for notebook in notebooks:
        run = f"set -e\n{activate}\njupyter nbconvert --to notebook --execute " \
              f"--ExecutePreprocessor.timeout=900 --output {shlex.quote(notebook.stem)}.run " \
              f"{shlex.quote(notebook.name)}\n"
        result = subprocess.run(["bash", "-c", run], cwd=folder, env=environment,
                                capture_output=True, text=True, timeout=1800, check=False)
        assert result.returncode == 0, f"{notebook.name}:\n{result.stderr[-4000:]}"
        ran = nbformat.read(folder / f"{notebook.stem}.run.ipynb", as_version=4)
        code = [cell for cell in ran.cells if cell.cell_type == "code"]
        assert code and all(cell.execution_count for cell in code), notebook.name
        errors = [output for cell in code for output in cell.outputs
                  if output.output_type == "error"]
        assert not errors, f"{notebook.name}: {errors[:1]}"
    # the environment is the student's own: the course's package from the wheel, not this
    # repository
    where = subprocess.run(
        ["bash", "-c", f"{activate}\npython -c 'import attention_course; "
                       "print(attention_course.__file__)'"],
        cwd=folder, env=environment, capture_output=True, text=True, check=True).stdout
    assert str(folder) in where and "site-packages" in where, where
