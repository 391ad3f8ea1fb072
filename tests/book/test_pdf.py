"""The book's PDFs (``python -m book_build.pdf``; ``make pdf``), read back with pypdf.

Each edition: a title page with the book's title and author; a table of contents listing
every part and chapter as the site numbers them, each entry a link to its place; the
outline (bookmarks) numbered the same; every font embedded, a CJK one in the Chinese
edition; the figures in the edition's language; the site's own sentences in its text, with
no link left to a file; nothing wider than the printed column; and the site links the PDF
of its language from every page.
"""

from __future__ import annotations

import hashlib
import html as html_module
import re
import unicodedata

import pytest
from bs4 import BeautifulSoup

from autograder.course import languages
from book_build import pdf
from book_build.paths import pdf_path
from tests.book.test_browser import CJK, CJK_FONTS
from tests.conftest import BOOK_OUTPUT, pdf_text, toc_pages

pytestmark = pytest.mark.xdist_group("book")

EDITIONS = [language.code for language in languages.LANGUAGES]
CHAPTERS = [page for page in toc_pages()[1:]]     # every page after the front page


def site_folder(site, code):
    folder = languages.language(code).site_folder
    return site / folder if folder else site


def page_title(site, code: str, page: str) -> str:
    """A page's title (its ``<h1>``) on the website of the edition ``code``."""
    text = (site_folder(site, code) / f"{page}.html").read_text(encoding="utf-8")
    title = re.search(r"<h1>(.*?)</h1>", text, re.S).group(1)
    return html_module.unescape(re.sub(r"<[^>]+>", "", title)).replace("#", "").strip()


def squeezed(text: str) -> str:
    """Text without its white space (pypdf spaces CJK and code as the layout placed them)
    or its ligatures (the PDF's "ﬂ" is the page's "fl")."""
    return re.sub(r"\s+", "", unicodedata.normalize("NFKC", text))


def served_pdf(site, code: str):
    """The PDF of the edition ``code`` as its website serves it."""
    return site_folder(site, code) / pdf_path(code, BOOK_OUTPUT).name


@pytest.fixture(scope="module")
def editions(site):
    from pypdf import PdfReader

    return {code: PdfReader(served_pdf(site, code)) for code in EDITIONS}


@pytest.fixture(scope="module")
def texts(site):
    """Each page's text, without the page number its footer ends with."""
    def without_number(number, words):
        words = words.rstrip()
        assert words.endswith(str(number)), (number, words[-80:])
        return words[:-len(str(number))]
    return {code: [without_number(number, words)
                   for number, words in enumerate(pdf_text(served_pdf(site, code)), 1)]
            for code in EDITIONS}


def outline(reader) -> list[tuple[int, str]]:
    def walk(entries, depth=0):
        for entry in entries:
            if isinstance(entry, list):
                yield from walk(entry, depth + 1)
            else:
                yield depth, entry.title
    return list(walk(reader.outline))


def link_annotations(page) -> list:
    return [a.get_object() for a in page.get("/Annots") or []
            if a.get_object().get("/Subtype") == "/Link"]


def is_internal(link) -> bool:
    action = link.get("/A")
    return "/Dest" in link or (action is not None and action.get("/S") == "/GoTo")


@pytest.mark.parametrize("code", EDITIONS)
def test_a_title_page_then_contents_whose_entries_are_links_to_every_chapter(
        site, editions, texts, code):
    reader, pages = editions[code], texts[code]
    title = page_title(site, code, toc_pages()[0])
    assert title in pages[0] and squeezed(pdf.author(code)) in squeezed(pages[0]), \
        pages[0][:300]
    assert ("课程组" in pdf.author(code)) == (code != languages.ENGLISH)  # in its language
    contents = next(i for i, text in enumerate(pages)
                    if languages.language(code).contents in text.splitlines()[:2])
    listed = squeezed("".join(pages[contents:contents + 2]))
    position = 0
    for chapter in CHAPTERS:                       # in the order of _toc.yml
        name = squeezed(page_title(site, code, chapter))
        found = listed.find(name, position)
        assert found >= 0, (chapter, name, listed[position:position + 200])
        position = found + len(name)
    links = [link for page in reader.pages[contents:contents + 2]
             for link in link_annotations(page)]
    assert sum(map(is_internal, links)) >= len(CHAPTERS), len(links)
    assert len(reader.pages) > 200


@pytest.mark.parametrize("code", EDITIONS)
def test_parts_and_chapters_are_numbered_in_the_outline_as_on_the_site(editions, code):
    titles = [title for _, title in outline(editions[code])]
    parts = [t for t in titles if re.match(r"\d+\. ", t)]
    chapters = [t for t in titles if re.match(r"\d+\.\d+\. ", t)]
    assert [p.split(".")[0] for p in parts] == ["1", "2", "3"], parts
    assert len(chapters) == sum(1 for page in CHAPTERS
                                if not page.endswith("/index") and "appendix" not in page)
    numbers = [tuple(map(int, re.match(r"(\d+)\.(\d+)\.", c).groups())) for c in chapters]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers), numbers


@pytest.mark.parametrize("code", EDITIONS)
def test_every_font_is_embedded(editions, code):
    fonts = {}
    for page in editions[code].pages:
        for font in ((page.get("/Resources") or {}).get("/Font") or {}).values():
            font = font.get_object()
            descriptor = font.get("/FontDescriptor")
            if descriptor is None and "/DescendantFonts" in font:
                descriptor = font["/DescendantFonts"][0].get_object().get("/FontDescriptor")
            embedded = font.get("/Subtype") == "/Type3" or (
                descriptor is not None and any(key in descriptor.get_object() for key in
                                               ("/FontFile", "/FontFile2", "/FontFile3")))
            fonts[str(font.get("/BaseFont"))] = embedded
    assert fonts and all(fonts.values()), [name for name, ok in fonts.items() if not ok]
    cjk = [name for name in fonts if any(f.replace(" ", "") in name for f in CJK_FONTS)]
    if code != languages.ENGLISH:
        assert cjk, sorted(fonts)


@pytest.mark.parametrize("code", EDITIONS)
def test_the_site_s_sentences_are_in_its_pdf(site, texts, code):
    """Every chapter's paragraphs of plain text, as the site shows them, are in the PDF
    (white space aside; one that a page break or a figure's text cuts in two excepted): in
    Chinese in the Chinese edition."""
    whole = squeezed("".join(texts[code]))
    for chapter in CHAPTERS:
        page = BeautifulSoup((site_folder(site, code) / f"{chapter}.html")
                             .read_text(encoding="utf-8"), "html.parser")
        paragraphs = [squeezed(paragraph.get_text()) for paragraph in
                      page.select("main article p")
                      # the prose, not what code printed; formulas, code and links are laid
                      # out otherwise in a PDF
                      if paragraph.find_parent(class_="cell_output") is None
                      and not paragraph.select(".math, code, a")]
        paragraphs = [text for text in paragraphs if len(text) >= 40]
        if not paragraphs:
            continue
        found = [text for text in paragraphs if text in whole]
        assert len(found) >= len(paragraphs) / 2, (chapter, [text[:60] for text in paragraphs
                                                             if text not in whole])
        if code != languages.ENGLISH:
            assert all(CJK.search(text) for text in found), chapter


def test_the_figures_are_printed_in_each_edition_s_language(editions, texts):
    images = {code: {hashlib.sha256(image.data).hexdigest() for page in reader.pages
                     for image in page.images} for code, reader in editions.items()}
    english = images.pop(languages.ENGLISH)
    assert len(english) >= 60, len(english)
    for code, printed in images.items():
        assert len(printed) >= len(english)
        assert len(printed - english) >= 0.8 * len(printed), "the English figures were printed"
        captions = re.findall(r"图\s*\d+\.\d+", "".join(texts[code]))
        assert len(captions) >= 60, len(captions)


@pytest.mark.parametrize("code", EDITIONS)
def test_every_link_leads_into_the_pdf_or_to_the_web(editions, code):
    links = [link for page in editions[code].pages for link in link_annotations(page)]
    outside = [str(link["/A"].get("/URI")) for link in links if not is_internal(link)]
    assert sum(map(is_internal, links)) > 500
    assert all(uri.startswith(("https://", "http://", "mailto:")) for uri in outside), \
        [uri for uri in outside if not uri.startswith(("https://", "http://", "mailto:"))][:5]


def test_nothing_wider_than_the_column_is_printed(browser, tmp_path):
    """The build refuses a page with anything wider than the printed column: a long code
    line is wrapped by the print stylesheet; a wide element it cannot wrap is reported."""
    page_file = tmp_path / "page.html"
    page_file.write_text(
        "<html><body><main><article><pre id='code'>" + "x = 1  # " + "y" * 400 +
        "</pre><div id='wide' style='width: 2000px'>a</div></article></main></body></html>")
    page = browser.new_page(viewport=pdf.PRINTED_COLUMN)
    page.goto(page_file.as_uri())
    assert len(page.evaluate(pdf.WIDER_THAN_THE_COLUMN)) >= 2          # the code and the div
    page.add_style_tag(path=str(pdf.PRINT_CSS))
    page.emulate_media(media="print")
    wide = page.evaluate(pdf.WIDER_THAN_THE_COLUMN)
    assert len(wide) == 1 and wide[0].startswith("div "), wide
    page.close()


@pytest.mark.parametrize("code", EDITIONS)
def test_every_page_of_the_site_links_its_edition_s_pdf(site, code):
    folder = site_folder(site, code)
    served = served_pdf(site, code)
    assert served.read_bytes() == pdf_path(code, BOOK_OUTPUT).read_bytes()
    for page in toc_pages():
        text = (folder / f"{page}.html").read_text(encoding="utf-8")
        links = re.findall(r'<a href="([^"]+\.pdf)"', text)
        assert len(links) == 1, (page, links)
        assert (folder / page).parent.joinpath(links[0]).resolve() == served.resolve(), page
