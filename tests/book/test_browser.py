"""The website as students meet it, in a real browser (Debian's Chromium, driven by Playwright).

The built site is served on localhost, as a web server would serve it, and every page of
`_toc.yml` is opened: it must load without a console error or a failed request (the site
works offline: MathJax and fonts are served from it), show its formulas typeset, and show
every figure with alt text. Then navigation, search and the exercise pages' buttons are
used as a student would, and screenshots are written to `_build/screenshots/` for review.
Internal links and anchors of the built HTML are checked without a browser.
"""

from __future__ import annotations

import functools
import io
import json
import re
import threading
import zipfile
from html.parser import HTMLParser
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest

from book_build.figures import legibility
from tests.conftest import READING_BOOK_GROUP, REPO, SCREENSHOTS, toc_pages, visible_text

pytestmark = pytest.mark.xdist_group(READING_BOOK_GROUP)  # once the site is built

VIEWPORT = {"width": 1280, "height": 800}


PAGES = toc_pages()
EXERCISES = [page for page in PAGES if page.startswith("exercises/")]
# The Chinese site (python -m book_build.translate): every page again, under zh/.
CHINESE = "zh/"
PAGES_IN_BOTH_LANGUAGES = PAGES + [CHINESE + page for page in PAGES]
CJK = re.compile(r"[\u4e00-\u9fff]")
CJK_FONTS = ("WenQuanYi", "Noto Sans CJK", "Noto Serif CJK", "Source Han", "Droid Sans Fallback")


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args) -> None:
        pass


@pytest.fixture(scope="module")
def served(site):
    """The built site on http://127.0.0.1:<random port>/."""
    server = ThreadingHTTPServer(("127.0.0.1", 0),
                                 functools.partial(QuietHandler, directory=str(site)))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def screenshots(site) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    return SCREENSHOTS


@pytest.fixture
def context(browser):
    context = browser.new_context(viewport=VIEWPORT)
    # What these tests check is what a page shows, not how fast: on a loaded machine (a
    # book build or another test run beside them) a page may take far longer than
    # Playwright's default 30 s to load and settle.
    context.set_default_timeout(PAGE_PATIENCE_MS)
    context.set_default_navigation_timeout(PAGE_PATIENCE_MS)
    yield context
    context.close()


PAGE_PATIENCE_MS = 180_000


def open_page(context, url: str):
    """Open ``url``; return the page and the list its console errors and failed loads go to."""
    page = context.new_page()
    problems: list[str] = []
    page.on("console", lambda m: problems.append(
        f"console {m.type}: {m.text} (at {m.location.get('url')}, on {page.url})")
        if m.type in ("error", "assert") else None)
    page.on("pageerror", lambda error: problems.append(f"uncaught: {error}"))
    # (ERR_ABORTED: a request cut short because the page navigated on, e.g. its favicon.)
    page.on("requestfailed", lambda r: problems.append(f"failed: {r.url} ({r.failure})")
            if r.failure != "net::ERR_ABORTED" else None)
    page.on("response", lambda r: problems.append(f"HTTP {r.status}: {r.url}")
            if r.status >= 400 else None)
    page.goto(url, wait_until="load")
    page.evaluate(WAIT_FOR_MATHJAX)
    return page, problems


# MathJax loads deferred; once its startup promise resolves, the page is typeset.
WAIT_FOR_MATHJAX = """async () => {
  if (!document.querySelector('script[src*="mathjax"]')) return 'no math';
  for (let i = 0; i < 400 && !(window.MathJax && MathJax.startup && MathJax.startup.promise); i++)
    await new Promise(r => setTimeout(r, 25));
  await MathJax.startup.promise;
  return 'typeset';
}"""

# Formulas that MathJax did not turn into rendered math: a `.math` element without output,
# a TeX error, or TeX delimiters left in the page's text outside code.
UNTYPESET = r"""() => {
  const found = [];
  for (const el of document.querySelectorAll('.math'))
    if (!el.querySelector('mjx-container'))
      found.push('not typeset: ' + el.textContent.slice(0, 80));
  for (const el of document.querySelectorAll('mjx-merror'))
    found.push('TeX error: ' + el.textContent.slice(0, 80));
  const skip = 'PRE, CODE, SCRIPT, STYLE, TEXTAREA, MJX-CONTAINER';
  const walker = document.createTreeWalker(document.querySelector('main') || document.body,
                                           NodeFilter.SHOW_TEXT);
  for (let node; (node = walker.nextNode()); ) {
    if (node.parentElement.closest(skip)) continue;
    const text = node.textContent;
    const delimiters = /\\\(|\\\)|\\\[|\\\]|\$\$|\$[^$\s][^$]*\$/;
    const commands = /\\(begin|frac|sqrt|mathbf|sum|top)\b/;
    if (delimiters.test(text) || commands.test(text))
      found.push('raw TeX: ' + text.trim().slice(0, 80));
  }
  return found;
}"""

FIGURES = """() => [...document.querySelectorAll('main img')].map(img => ({
  src: img.getAttribute('src'), alt: (img.getAttribute('alt') || '').trim(),
  loaded: img.complete && img.naturalWidth > 0}))"""


@pytest.mark.parametrize("page_name", PAGES_IN_BOTH_LANGUAGES)
def test_page_loads_cleanly_with_typeset_math_and_described_figures(served, context,
                                                                     page_name):
    page, problems = open_page(context, served + page_name + ".html")
    assert page.locator("main h1").count() >= 1, "the page has a title"
    if page_name.startswith(CHINESE):
        assert page.evaluate("document.documentElement.lang") == "zh-CN"
        assert CJK.search(page.locator("main h1").first.inner_text()), "the title is Chinese"
        assert_drawn_in_a_cjk_font(context, page)
    assert not problems, "\n".join(problems)
    untypeset = page.evaluate(UNTYPESET)
    assert not untypeset, "\n".join(untypeset)
    for figure in page.evaluate(FIGURES):
        assert figure["loaded"], f"{figure['src']} does not load"
        assert figure["alt"], f"{figure['src']} has no alt text"
        assert not re.search(r"\.(png|svg|jpe?g|gif)$", figure["alt"]), \
            f"{figure['src']}: its alt text is a file name"


# The visible element of the page's main text with the most Chinese characters of its own
# (not its children's), marked so that the DevTools protocol can find it.
MARK_CHINESE_TEXT = r"""() => {
  let best = null, most = 0;
  for (const el of document.querySelectorAll('main *')) {
    if (!el.checkVisibility()) continue;   // e.g. inside a folded solution
    const own = [...el.childNodes].filter(n => n.nodeType === 3).map(n => n.textContent).join('');
    const count = (own.match(/[\u4e00-\u9fff]/g) || []).length;
    if (count > most) { best = el; most = count; }
  }
  if (best) best.setAttribute('data-chinese-text', '');
  return most;
}"""


def assert_drawn_in_a_cjk_font(context, page) -> None:
    """The page's Chinese characters are drawn with a font that has them (Chromium's own
    account of the fonts it used, from the DevTools protocol), not as empty boxes."""
    characters = page.evaluate(MARK_CHINESE_TEXT)
    assert characters > 0, "no Chinese text in the page"
    devtools = context.new_cdp_session(page)
    devtools.send("DOM.enable")
    devtools.send("CSS.enable")
    root = devtools.send("DOM.getDocument")["root"]["nodeId"]
    node = devtools.send("DOM.querySelector", {"nodeId": root,
                                               "selector": "[data-chinese-text]"})["nodeId"]
    fonts = devtools.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]
    drawn = sum(font["glyphCount"] for font in fonts
                if font["familyName"].startswith(CJK_FONTS))
    assert drawn >= characters, f"{characters} Chinese characters, fonts used: {fonts}"
    devtools.detach()


@pytest.mark.parametrize("page_name", ["book/intro", "book/encoder/multi-head",
                                       "exercises/attention-scoring/attention-scoring"])
def test_the_language_switch_leads_to_the_same_page_and_back(served, context, page_name):
    english, problems = open_page(context, served + page_name + ".html")
    english_title = english.locator("main h1").first.inner_text()
    english.locator("a.course-language-switch").click()
    english.wait_for_load_state("load")
    assert english.url == served + CHINESE + page_name + ".html"
    chinese_title = english.locator("main h1").first.inner_text()
    assert CJK.search(chinese_title) and chinese_title != english_title
    assert english.locator("a.course-language-switch").inner_text().strip() == "English"
    english.locator("a.course-language-switch").click()
    english.wait_for_load_state("load")
    assert english.url == served + page_name + ".html"
    assert english.locator("main h1").first.inner_text() == english_title
    assert not problems, "\n".join(problems)


# A reader scrolls a little into a section (its top 40 px above where a link puts it), once
# the page has settled: images and formulas that come in late move what is below them.
SCROLL_INTO = """async id => {
  const section = document.getElementById(id);
  for (let attempt = 0; attempt < 40; attempt++) {
    section.scrollIntoView();
    window.scrollBy(0, 40);
    const top = section.getBoundingClientRect().top;
    await new Promise(done => setTimeout(done, 250));
    if (Math.abs(section.getBoundingClientRect().top - top) < 1) return top;
  }
  return null;
}"""


def test_the_language_switch_keeps_the_section_being_read(served, context):
    """A reader deep in a long page switches language and lands on the same section, and
    back (both editions give a section the same id)."""
    page_name = "book/traditional/attention-module"
    page, problems = open_page(context, served + page_name + ".html")
    sections = page.evaluate("[...document.querySelectorAll('main section section[id]')]"
                             ".map(s => s.id)")
    for here, section in ((page_name, sections[len(sections) // 2]),
                          (CHINESE + page_name, sections[len(sections) // 3])):
        top = page.evaluate(SCROLL_INTO, section)
        assert top is not None and top < 64, (here, section, top)   # the reader is in it
        # where the reader sees it, in the sticky header (Playwright's own click scrolls the
        # page to the link's place in the flow first: 400 px up, into the section before)
        box = page.locator("a.course-language-switch").bounding_box()
        assert 0 <= box["y"] < 100, box
        with page.expect_navigation(wait_until="load"):
            page.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
        there = page_name if here.startswith(CHINESE) else CHINESE + page_name
        assert page.url == f"{served}{there}.html#{section}", (here, page.url)
        top = page.evaluate("id => document.getElementById(id).getBoundingClientRect().top",
                            section)
        assert -5 <= top <= VIEWPORT["height"] / 2, (there, section, top)
        assert page.evaluate("window.scrollY") > 2000, "the page opened at its top"
    assert not problems, "\n".join(problems)


def test_every_page_links_to_itself_in_the_other_language(site):
    for page_name in PAGES:
        for here, there in ((page_name, CHINESE + page_name), (CHINESE + page_name, page_name)):
            html = (site / f"{here}.html").read_text()
            switch = re.search(r'<a href="([^"]+)" hreflang="([^"]+)"[^>]*course-language-switch',
                               html)
            assert switch, here
            assert (site / here).parent.joinpath(switch.group(1)).resolve() == \
                (site / f"{there}.html").resolve(), here
            assert switch.group(2) == ("zh-CN" if there.startswith(CHINESE) else "en"), here
            assert f'<html lang="{"zh-CN" if here.startswith(CHINESE) else "en"}"' in html, here
            alternates = re.findall(r'<link rel="alternate" hreflang="([^"]+)"', html)
            assert sorted(alternates) == ["en", "zh-CN"], here


def test_formulas_are_rendered_by_the_local_mathjax(served, context):
    page, problems = open_page(context, served + "book/traditional/attention-module.html")
    assert not problems, "\n".join(problems)
    source = page.evaluate("document.querySelector('script[src*=\"mathjax\"]').src")
    assert source.startswith(served) and source.split("?")[0].endswith("tex-mml-chtml.js")
    assert page.locator("mjx-container").count() > 20


def test_next_and_previous_links_walk_the_book_in_toc_order(served, context):
    page, problems = open_page(context, served + PAGES[0] + ".html")
    page.goto(served)   # the site's root redirects to the front page
    page.wait_for_url(served + PAGES[0] + ".html")
    visited = []
    while True:
        page.wait_for_load_state("load")
        visited.append(urlsplit(page.url).path.removeprefix("/").removesuffix(".html"))
        following = page.locator("a.right-next")
        if not following.count():
            break
        with page.expect_navigation(wait_until="load"):
            following.first.click()
    assert visited == PAGES
    page.locator("a.left-prev").first.click()
    page.wait_for_url(served + PAGES[-2] + ".html")
    assert not problems, "\n".join(problems)


def test_sidebar_lists_every_page_and_navigates(served, context):
    page, problems = open_page(context, served + "book/intro.html")
    sidebar = page.locator("nav.bd-docs-nav")
    hrefs = sidebar.locator("a").evaluate_all("links => links.map(a => a.href)")
    targets = {urlsplit(href).path.removeprefix("/").removesuffix(".html") for href in hrefs}
    assert set(PAGES) - {PAGES[0]} <= targets, "every page is in the sidebar"
    sidebar.get_by_role("link", name="Traditional attention").click()
    page.wait_for_url(served + "book/traditional/index.html")
    current = page.locator("nav.bd-docs-nav a.current")
    assert "Traditional attention" in current.first.inner_text()
    page.locator("nav.bd-docs-nav").get_by_role("link", name=re.compile("Glossary")).click()
    page.wait_for_url(served + "book/appendix/glossary.html")
    assert not problems, "\n".join(problems)


def test_search_finds_a_chapter(served, context):
    page, problems = open_page(context, served + "book/intro.html")
    page.locator("button.search-button-field, button.search-button").first.click()
    field = page.locator("input[name=q]:visible").first
    field.fill("softmax")
    field.press("Enter")
    page.wait_for_url(re.compile(r"search\.html\?q=softmax"))
    # Results appear one by one; the summary line comes when the search is finished.
    page.locator("#search-results .search-summary", has_text="found").wait_for()
    results = page.locator("#search-results ul.search li a")
    found = results.evaluate_all("links => links.map(a => a.getAttribute('href'))")
    assert any("book/traditional/attention-module.html" in href for href in found), found
    assert not problems, "\n".join(problems)


VISIBLE_SEARCH_CONTROLS = """() => [...document.querySelectorAll(
    'button.search-button-field, button.search-button, form.bd-search')].filter(e => {
  const box = e.getBoundingClientRect();
  return box.width > 0 && box.height > 0 && getComputedStyle(e).visibility !== 'hidden';
}).length"""


@pytest.mark.parametrize("page_name", ["book/intro", "zh/book/intro", "search",
                                       "book/appendix/glossary"])
def test_one_search_box_on_a_desktop_and_on_a_phone(served, context, page_name):
    page, problems = open_page(context, f"{served}{page_name}.html")
    for width in (1280, 390):
        page.set_viewport_size({"width": width, "height": 900})
        page.wait_for_timeout(200)
        assert page.evaluate(VISIBLE_SEARCH_CONTROLS) == 1, (page_name, width)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page_name", EXERCISES)
def test_exercise_page_downloads_and_launches_the_student_release(served, context, page_name):
    assignment = page_name.split("/")[1]
    page, problems = open_page(context, served + page_name + ".html")
    links = page.locator(".article-header-buttons a").evaluate_all(
        "links => links.map(a => ({href: a.href, text: a.textContent.trim()}))")
    hrefs = [link["href"] for link in links]
    assert not [h for h in hrefs if "solutions" in h], hrefs

    notebook = [h for h in hrefs if h.endswith(f"_sources/{page_name}.ipynb")]
    assert notebook, hrefs
    response = page.request.get(notebook[0])
    assert response.ok
    text = response.text()
    cells = json.loads(text)["cells"]
    assert any("raise NotImplementedError()" in "".join(c["source"]) for c in cells)
    assert "BEGIN SOLUTION" not in text and "BEGIN HIDDEN TESTS" not in text

    folder = [h for h in hrefs if h.endswith(f"{page_name}.zip")]
    assert folder, hrefs
    response = page.request.get(folder[0])
    assert response.ok
    archive = zipfile.ZipFile(io.BytesIO(response.body()))
    released = sorted(p.relative_to(REPO / "exercises").as_posix()
                      for p in (REPO / "exercises" / assignment).rglob("*")
                      if p.is_file() and ".ipynb_checkpoints" not in p.parts
                      and "__pycache__" not in p.parts and ".zh_CN." not in p.name)
    assert sorted(archive.namelist()) == released
    for name in archive.namelist():
        content = archive.read(name).decode(errors="replace")
        assert "BEGIN SOLUTION" not in content and "BEGIN HIDDEN TESTS" not in content, name

    # This repository sets no launch service (_config.yml): no launch button is offered.
    assert not [link for link in links if link["text"] in ("Binder", "JupyterHub")], links
    page.locator("button[aria-label='Download this page']").click()
    assert page.get_by_role("link", name=".zip").is_visible()
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("page_name", EXERCISES)
def test_chinese_exercise_page_downloads_the_chinese_notebook(served, context, page_name):
    """The Chinese page offers the Chinese notebook, under the name the grader expects."""
    assignment = page_name.split("/")[1]
    release = REPO / "exercises" / assignment
    english = json.loads((release / f"{assignment}.ipynb").read_text())
    chinese = json.loads((release / f"{assignment}.zh_CN.ipynb").read_text())
    page, problems = open_page(context, served + CHINESE + page_name + ".html")
    hrefs = page.locator(".article-header-buttons a").evaluate_all(
        "links => links.map(a => a.href)")
    notebook = [h for h in hrefs if h.endswith(f"_sources/{page_name}.ipynb")]
    assert notebook, hrefs
    assert json.loads(page.request.get(notebook[0]).text()) == chinese
    folder = [h for h in hrefs if h.endswith(f"{page_name}.zip")]
    assert folder, hrefs
    archive = zipfile.ZipFile(io.BytesIO(page.request.get(folder[0]).body()))
    assert json.loads(archive.read(f"{assignment}/{assignment}.ipynb")) == chinese
    assert chinese != english
    others = sorted(p.relative_to(release.parent).as_posix() for p in release.iterdir()
                    if p.is_file() and p.suffix != ".ipynb")
    assert sorted(archive.namelist()) == sorted([f"{assignment}/{assignment}.ipynb", *others])
    assert not problems, "\n".join(problems)


def test_no_launch_button_or_word_about_one_while_no_service_is_set(site):
    """_config.yml names no repository, Binder or JupyterHub here: nothing offers one."""
    for page_name in PAGES:
        html = (site / f"{page_name}.html").read_text()
        assert "launch-buttons" not in html, page_name
        assert "rocket" not in visible_text(html).lower(), page_name


PLACEHOLDER_HOSTS = ("example.org", "example.com", "your-course", "jupyterhub.example")


def test_no_placeholder_host_anywhere_in_the_site(site):
    for path in site.rglob("*"):
        if path.is_file() and path.suffix in {".html", ".js", ".json", ".txt", ".ipynb"}:
            text = path.read_text(errors="replace")
            found = [host for host in PLACEHOLDER_HOSTS if host in text]
            assert not found, f"{path.relative_to(site)}: {found}"


def test_download_links_resolve_to_the_student_release(site):
    """Every download a page offers is a file of exercises/ (or the page's own source)."""
    for page_name in PAGES:
        html = (site / f"{page_name}.html").read_text()
        for href in re.findall(r'href="([^"]+\.(?:zip|ipynb))"', html):
            target = (site / page_name).parent / unquote(href)
            assert target.resolve().exists(), f"{page_name}: {href}"
            if page_name in EXERCISES and href.endswith(".ipynb"):
                released = REPO / "exercises" / page_name.split("/")[1] / Path(href).name
                assert released.exists(), f"{page_name}: {href}"


# Code, outputs and display formulas must fit their column, and the page its window: a
# block wider than its column scrolls sideways (the theme's scrollbar is all but invisible),
# a page wider than the window makes the reader scroll the whole page.
WIDER_THAN_THEIR_COLUMN = """async () => {
  // everything folded is opened (hidden cells, worked solutions), as a reader would
  for (const folded of document.querySelectorAll('main details')) folded.open = true;
  for (const hidden of document.querySelectorAll('main .toggle-hidden'))
    hidden.classList.remove('toggle-hidden');
  window.dispatchEvent(new Event('resize'));
  // a resize is handled on the next animation frame (book/_static/fit-math.js)
  for (let i = 0; i < 3; i++) await new Promise(r => requestAnimationFrame(r));
  const found = [];
  for (const pre of document.querySelectorAll('main pre'))
    if (pre.scrollWidth > pre.clientWidth + 1)
      found.push('code or output: ' + pre.innerText.split('\\n')
                 .sort((a, b) => b.length - a.length)[0].slice(0, 80));
  // a display formula scrolls inside MathJax's own block (mjx-container, overflow: auto)
  for (const box of document.querySelectorAll('main mjx-container[display="true"]'))
    if (box.scrollWidth > box.clientWidth + 1) {
      const number = box.closest('.math') && box.closest('.math').querySelector('.eqno');
      const tex = box.querySelector('mjx-assistive-mml') || box;
      found.push(`formula ${number ? number.textContent.trim() : ''} ` +
                 `${box.scrollWidth - box.clientWidth} px too wide: ` +
                 tex.textContent.replace(/\\s+/g, ' ').slice(0, 60));
    }
  const page = document.documentElement;
  if (page.scrollWidth > page.clientWidth + 1)
    found.push(`the page: ${page.scrollWidth} px in a ${page.clientWidth} px window`);
  return found;
}"""
PHONE = {"width": 390, "height": 844}


def test_nothing_is_wider_than_its_column_on_a_desktop_or_a_phone(served, context):
    """Every page in both languages, at 1280 px and at a phone's 390 px.

    At 1280 px, every figure a page's code drew has at least the room
    book_build.figures.legibility measures its texts in (COLUMN_PIXELS), and is shown at
    its own width, or at the room's where it is wider."""
    too_wide, cramped = {}, []
    for page_name in PAGES_IN_BOTH_LANGUAGES:
        page, _ = open_page(context, served + page_name + ".html")
        for viewport in (VIEWPORT, PHONE):
            page.set_viewport_size(viewport)
            for found in page.evaluate(WIDER_THAN_THEIR_COLUMN):
                too_wide.setdefault(f"{page_name} at {viewport['width']} px", []).append(found)
            if viewport == VIEWPORT:
                cramped += [f"{page_name}: {figure}" for figure in page.evaluate(OUTPUT_FIGURES)
                            if figure["column"] < legibility.COLUMN_PIXELS
                            or abs(figure["shown"] - min(figure["own"], figure["column"])) > 1]
        page.close()
    assert not too_wide, "\n".join(f"{where}: {len(found)}, e.g. {found[:3]}"
                                    for where, found in too_wide.items())
    assert not cramped, "\n".join(cramped)


# For each figure a page's code drew: the widest its image can be (the content box of its
# <figure>), the width the build gives it, and the width it is shown at.
OUTPUT_FIGURES = """() => [...document.querySelectorAll('div.cell_output figure img')].map(img => {
  const box = img.closest('figure'), style = getComputedStyle(box);
  return {src: img.getAttribute('src'), own: parseFloat(img.style.width),
          shown: img.getBoundingClientRect().width,
          column: box.clientWidth - parseFloat(style.paddingLeft)
                  - parseFloat(style.paddingRight)};
})"""


TQDM_BAR = re.compile(r"\d+%\|[^|\n]*\||\d+(?:\.\d+)?(?:it|s)/s\]")


def test_no_progress_bar_is_printed_into_a_page(site):
    """Long work leaves one summary line in a built page, never a bar's redraws."""
    for page_name in PAGES:
        text = visible_text((site / f"{page_name}.html").read_text())
        assert not TQDM_BAR.search(text), f"{page_name}: {TQDM_BAR.search(text).group()}"


# What a cell prints by accident: Matplotlib's font lookups, Python's warnings, tracebacks.
NOISE = re.compile(r"findfont:|\b[A-Z]\w*Warning\b|Traceback \(most recent call last\)")
OUTPUT_BLOCK = re.compile(r'<div class="output ([a-z_]+)[^"]*"[^>]*>(.*?)</pre>', re.DOTALL)


def test_no_build_noise_is_printed_into_a_page(site):
    """A page shows what its cells mean to show: no stream written to stderr, and no font
    lookup, warning or traceback in any output, in either language."""
    noisy = {}
    for page_name in PAGES_IN_BOTH_LANGUAGES:
        for kind, block in OUTPUT_BLOCK.findall((site / f"{page_name}.html").read_text()):
            text = visible_text(block)
            if kind == "stderr" or NOISE.search(text):
                noisy.setdefault(page_name, []).append(f"{kind}: {text.strip()[:120]!r}")
    assert not noisy, "\n".join(f"{page}: {found}" for page, found in noisy.items())


def test_screenshots_for_review(served, context, screenshots):
    """The front page as it first appears, a chapter at its table of formulas and at its first
    figure, and an exercise page with its download menu open."""
    page, problems = open_page(context, served + "book/intro.html")
    page.screenshot(path=screenshots / "front-page.png")

    page, more = open_page(context, served + "book/traditional/attention-module.html")
    page.evaluate("document.getElementById('step-1-in-detail-five-scoring-functions')"
                  ".scrollIntoView({block: 'start'})")
    page.screenshot(path=screenshots / "chapter-attention-module.png")
    page.evaluate("document.querySelector('main img').scrollIntoView({block: 'center'})")
    page.screenshot(path=screenshots / "chapter-attention-module-figure.png")
    problems += more

    page, more = open_page(context, served + "exercises/attention-scoring/attention-scoring.html")
    page.locator("button[aria-label='Download this page']").click()
    page.get_by_role("link", name=".zip").wait_for()
    page.screenshot(path=screenshots / "exercise-attention-scoring.png")
    problems += more
    assert not problems, "\n".join(problems)
    for name in ("front-page", "chapter-attention-module", "chapter-attention-module-figure",
                 "exercise-attention-scoring"):
        assert (screenshots / f"{name}.png").stat().st_size > 10_000


def test_front_page_fits_one_screen(served, context):
    """What is learnt, in which order, where the exercises and the instructors' guide are:
    all above the fold of a laptop screen."""
    page, _ = open_page(context, served + "book/intro.html")
    for text in ("attention-pooling", "attention-scoring", "seq2seq-attention",
                 "multihead-attention", "instructors’ guide", "Part 3"):
        box = page.locator("main").get_by_text(text, exact=False).first.bounding_box()
        assert box and box["y"] + box["height"] <= VIEWPORT["height"], text


# The glossary: every term of the lecture in English and Chinese, linked from the book.
LECTURE_TERMS = ["注意力机制", "打分函数", "缩放点积模型", "加性模型", "双线性模型", "点积模型",
                 "连接模型", "软注意力", "硬注意力", "全局注意力", "局部注意力", "覆盖机制",
                 "注意力偏置", "自注意力", "多头注意力", "编码器–解码器", "对齐", "键值对", "查询",
                 "位置编码", "加权求和", "图注意力", "词袋模型", "句编码", "词编码", "融合编码"]


def test_glossary_defines_the_lecture_terms_and_the_book_links_them(site):
    glossary = (site / "book/appendix/glossary.html").read_text()
    terms = re.findall(r'<dt id="term-[^"]*">(.*?)<a class="headerlink"', glossary)
    names = {re.sub(r"<[^>]+>", "", term).strip() for term in terms}
    assert set(LECTURE_TERMS) <= names, set(LECTURE_TERMS) - names
    linking = [page for page in PAGES if not page.startswith(("exercises/", "book/appendix/"))
               and "appendix/glossary.html#term-" in (site / f"{page}.html").read_text()]
    assert len(linking) >= len(PAGES) // 2, linking


class Links(HTMLParser):
    """The ids of a page and the links (href, src) it makes."""

    def __init__(self):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        for key in ("id", "name"):
            if attrs.get(key):
                self.ids.add(attrs[key])
        for key in ("href", "src"):
            if attrs.get(key) and not (tag == "link" and attrs.get("rel") == "canonical"):
                self.links.append(attrs[key])


def test_internal_links_and_anchors_resolve(site):
    parsed: dict[Path, Links] = {}

    def parse(path: Path) -> Links:
        if path not in parsed:
            parsed[path] = Links()
            parsed[path].feed(path.read_text(errors="replace"))
        return parsed[path]

    broken = []
    for page in sorted(site.rglob("*.html")):
        if "_static" in page.relative_to(site).parts[:2]:   # the themes' template fragments
            continue
        for link in parse(page).links:
            parts = urlsplit(link)
            if parts.scheme or parts.netloc:   # other sites, mailto:, javascript:
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if target.is_dir():
                target = target / "index.html"
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target.suffix == ".html" \
                    and unquote(parts.fragment) not in parse(target).ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert not broken, "\n".join(broken[:30])


def test_the_site_is_built_once_per_session(request):
    """Under `--dist loadgroup`, this file runs in the group that only reads the site, on
    another worker than the group "book" that builds it (the ``site`` fixture builds it
    once, under a lock, for every worker). A pytest that loses the `xdist_group` (pytest
    9.2 with pytest-xdist 3.8) would scatter this file's tests over the workers."""
    if getattr(request.config.option, "loadgroup", False):
        assert request.node.nodeid.endswith(f"@{READING_BOOK_GROUP}"), request.node.nodeid
