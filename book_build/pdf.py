"""The book as a PDF, one per edition: ``python -m book_build.pdf [--language CODE ...]``.

Sphinx's ``singlehtml`` builder writes an edition as one page, from the same sources and the
same cached outputs as the website (nothing executes: the notebooks must be in the cache,
as ``python -m book_build.execute`` leaves them; a page that is not fails the build), in
the edition's language with its figures and translated catalogues. Chromium, driven by
Playwright, prints that page with :data:`PRINT_CSS` and the front matter of
:data:`FRONT_MATTER`: a title page, a table of contents whose entries are links, the parts,
chapters and sections numbered as on the site, MathJax's formulas, code wrapped inside the
page, page numbers, every font embedded (a CJK font for Chinese), and a bookmark outline.

Written where :func:`book_build.paths.pdf_path` says: ``_build/pdf/attention-in-nlp.pdf``,
``_build/pdf/attention-in-nlp.zh_CN.pdf``. With ``--jobs 2`` the editions are built side by
side: each writes its own single page, its own Sphinx environment and its own PDF, and
they only read the cache.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import time
from pathlib import Path

from autograder.course import languages

from .extensions.interface_words import translated_settings
from .paths import LOCALES, PDF_NAME, ROOT, build_folder, cache_folder, pdf_path
from .toc import toc_pages
from .translate import overrides, sphinx_build

# Debian's Chromium (`make browser-tools`), or another one named by $CHROMIUM. Without the
# background-networking flags it keeps trying to reach Google's services, which a machine
# without internet refuses.
CHROMIUM = Path(os.environ.get("CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]
# A4 less the margins below, in CSS pixels (96 per inch): the page is laid out at the width
# it is printed at.
MARGINS = {"top": "18mm", "bottom": "20mm", "left": "16mm", "right": "16mm"}
PRINTED_COLUMN = {"width": round((210 - 16 - 16) / 25.4 * 96), "height": 1000}
PATIENCE_MS = 600_000       # a loaded machine may take minutes to lay out 600 pages

PRINT_CSS = ROOT / "book_build" / "pdf.css"
ROOT_PAGE = toc_pages(ROOT)[0]      # the book's first page, which the single page is built as
"""The stylesheet added for print: what the website shows around the book left out, each
part and chapter on a new page, code wrapped at the page's edge."""

FRONT_MATTER = """([title, author, edition, contents]) => {
  const article = document.querySelector('main article') || document.querySelector('main');
  const front = document.createElement('section');
  front.className = 'pdf-front';
  const page = document.createElement('div');
  page.className = 'pdf-title-page';
  for (const [tag, text] of [['h1', title], ['p', author], ['p', edition]]) {
    const element = document.createElement(tag);
    element.textContent = text;
    page.append(element);
  }
  const toc = document.createElement('nav');
  toc.className = 'pdf-contents';
  toc.setAttribute('aria-label', contents);
  const heading = document.createElement('h2');
  heading.textContent = contents;
  const list = document.createElement('ol');
  // Each page of the book starts with <span id="document-…">: its first heading is the
  // page's title (a part or an appendix page: h2; a chapter: h3).
  for (const anchor of document.querySelectorAll('span[id^="document-"]')) {
    const section = anchor.nextElementSibling;
    const title = section && section.querySelector('h1, h2, h3');
    if (!title || section === article.querySelector('section')) continue;
    const item = document.createElement('li');
    item.className = 'pdf-contents-' + title.tagName.toLowerCase();
    const link = document.createElement('a');
    link.href = '#' + section.id;
    link.textContent = title.textContent.replace(/#$/, '').trim();
    item.append(link);
    list.append(item);
  }
  toc.append(heading, list);
  front.append(page, toc);
  article.prepend(front);
  return list.children.length;
}"""

# Sphinx's single page lies in the root page's folder (book/) but writes every address as if
# it lay in the build's root, where :func:`single_page` copies it. A link to the page itself
# (``book/intro.html#term-query``) becomes a link within the document (a PDF link to a place
# in it); a link to another file of the website (a download, a figure's own image) is left
# as what it shows.
LINKS = """own => {
  let local = 0, dropped = 0;
  for (const link of document.querySelectorAll('main a[href]')) {
    const href = link.getAttribute('href');
    if (/^[a-z]+:/i.test(href) || href.startsWith('#')) continue;
    const [file, fragment] = href.split('#');
    if (file === own && fragment !== undefined) {
      link.setAttribute('href', '#' + fragment);
      local++;
    } else {
      link.removeAttribute('href');
      dropped++;
    }
  }
  return [local, dropped];
}"""

READY = """async () => {
  // The dropdowns (an exercise's hint and solution) are printed open: a PDF cannot open them.
  for (const dropdown of document.querySelectorAll('main details.sd-dropdown'))
    dropdown.open = true;
  for (const image of document.images) image.loading = 'eager';
  await Promise.all([...document.images].map(image => image.complete ? null :
    new Promise(done => { image.onload = image.onerror = done; })));
  if (window.MathJax && MathJax.startup && MathJax.startup.promise)
    await MathJax.startup.promise;
  await document.fonts.ready;
  return [...document.images].filter(image => !image.naturalWidth).map(image => image.src);
}"""

# What is wider than the printed column, or holds what is wider than itself (a line of code
# that does not wrap), as the page is laid out for print: it would run off the paper or be
# cut (MathJax's glyphs are measured as their formula).
WIDER_THAN_THE_COLUMN = """() => {
  const article = document.querySelector('main article');
  const right = article.getBoundingClientRect().right;
  const wide = [];
  for (const element of article.querySelectorAll('*')) {
    if (element.closest('mjx-container') && element.tagName !== 'MJX-CONTAINER') continue;
    const box = element.getBoundingClientRect();
    const style = getComputedStyle(element);
    // A block (not a box in a line: inline math measures MathJax's hidden MathML too) that
    // scrolls or clips what is wider than itself, or a line of code that does not wrap.
    const clips = !style.display.startsWith('inline') &&
                  (style.overflowX !== 'visible' || element.tagName === 'PRE');
    const over = Math.max(box.right - right,
                          clips ? element.scrollWidth - element.clientWidth : 0);
    if (box.width && over > 1)
      wide.push(`${element.tagName.toLowerCase()} ${Math.round(over)} px too wide: ` +
                (element.textContent || '').trim().slice(0, 80));
  }
  return wide;
}"""

FOOTER = ('<div style="width:100%;font-size:9px;text-align:center;color:#444;">'
          '<span class="pageNumber"></span></div>')


def single_page(code: str, output_root: Path) -> Path:
    """Build the edition in ``code`` as one HTML page; return it.

    A translated edition shares its website's build environment (the pages as Sphinx read
    them, ``_build/<code>/.doctrees``: the settings are the same), as Sphinx's builders may:
    whichever of the two builds comes second does not read the pages again. The English
    website is built by ``jupyter-book`` with its own settings: its page has its own."""
    build = build_folder(output_root)
    work = build / "pdf" / "work" / code
    if code == languages.ENGLISH:
        language, doctrees = None, work / ".doctrees"
    else:
        language, doctrees = code, build / code / ".doctrees"
    status = sphinx_build(work / "singlehtml", doctrees, "singlehtml",
                          overrides(language, cache_folder(output_root)), strict=True)
    if status != 0:
        raise SystemExit(f"the {code} edition's single page did not build (status {status})")
    page = work / "singlehtml" / f"{PDF_NAME}.html"
    shutil.copyfile(work / "singlehtml" / f"{ROOT_PAGE}.html", page)
    return page


def author(code: str) -> str:
    """The book's author line, as ``_config.yml`` gives it, in the edition's language (the
    course's interface catalogue, as for the website's footer)."""
    import yaml

    english = str(yaml.safe_load((ROOT / "_config.yml").read_text(encoding="utf-8"))["author"])
    return translated_settings(ROOT, [str(LOCALES)], code, {"author": english})["author"]


def print_page(page_file: Path, target: Path, code: str) -> int:
    """Print ``page_file`` to ``target`` in Chromium; return the number of entries in the
    table of contents."""
    from playwright.sync_api import sync_playwright

    language = languages.language(code)
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS,
                                             headless=True)
        context = browser.new_context(viewport=PRINTED_COLUMN)
        context.set_default_timeout(PATIENCE_MS)
        context.add_init_script("try { localStorage.setItem('mode', 'light');"
                                " localStorage.setItem('theme', 'light'); } catch (e) {}")
        page = context.new_page()
        page.goto(page_file.as_uri(), wait_until="load")
        page.add_style_tag(path=str(PRINT_CSS))
        page.evaluate(LINKS, f"{ROOT_PAGE}.html")
        title = page.locator("main article h1").first.text_content().replace("#", "").strip()
        entries = page.evaluate(FRONT_MATTER, [title, author(code), language.name,
                                               language.contents])
        missing = page.evaluate(READY)
        if missing:
            raise SystemExit(f"images that did not load: {missing[:5]}")
        page.emulate_media(media="print")
        wide = page.evaluate(WIDER_THAN_THE_COLUMN)
        if wide:
            raise SystemExit(f"{len(wide)} elements would run off the page:\n" +
                             "\n".join(wide[:20]))
        target.parent.mkdir(parents=True, exist_ok=True)
        page.pdf(path=str(target), format="A4", print_background=True, outline=True,
                 tagged=True, display_header_footer=True, header_template="<span></span>",
                 footer_template=FOOTER,
                 margin=MARGINS)
        browser.close()
    return entries


def build(code: str, output_root: Path = ROOT) -> Path:
    """The PDF of the edition in ``code``: its single page built, then printed."""
    started = time.monotonic()
    page_file = single_page(code, output_root)
    built = time.monotonic()
    target = pdf_path(code, output_root)
    entries = print_page(page_file, target, code)
    print(f"{target}: {target.stat().st_size / 1e6:.1f} MB, {entries} entries in its "
          f"contents (page built in {built - started:.0f} s, printed in "
          f"{time.monotonic() - built:.0f} s)")
    return target


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", action="append", dest="codes",
                        choices=[language.code for language in languages.LANGUAGES],
                        help="an edition (default: every one)")
    parser.add_argument("--output-root", type=Path, default=ROOT,
                        help="the build's output root (its _build/ holds the cache)")
    parser.add_argument("--jobs", type=int, default=1,
                        help="editions built at once, each in a process of its own (they "
                        "share nothing they write)")
    args = parser.parse_args(argv)
    codes = args.codes or [language.code for language in languages.LANGUAGES]
    if args.jobs <= 1 or len(codes) == 1:
        for code in codes:
            build(code, args.output_root)
        return 0
    import concurrent.futures

    with concurrent.futures.ProcessPoolExecutor(min(args.jobs, len(codes))) as pool:
        for future in [pool.submit(build, code, args.output_root) for code in codes]:
            future.result()        # an edition that failed stops it, with its reason
    return 0


if __name__ == "__main__":
    sys.exit(main())
