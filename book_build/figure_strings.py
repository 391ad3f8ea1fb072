"""The strings of the book's figures, from the executed notebooks, into ``figures.po``.

While the book's notebooks execute (``execute_notebooks.py``), every figure records the
strings it draws, with their roles, beside its translated renderings
(:mod:`book_build.figures.translation`). This script reads them from the cache and
brings every ``locales/<language>/LC_MESSAGES/figures.po`` up to date: each string that
must be translated (titles, axis labels, legend entries, texts; tick labels are data; the
menus, headings and titles of the interactive attention views, from their HTML; and the
cells and lines of the tables printed as Markdown, :mod:`book_build.figures.printed_text`) gets
an entry, located at the pages that draw it -- one entry for the strings that differ in
their numbers only, ``layer %1, head %2`` -- translations already made are kept, entries
no figure draws any more are dropped -- except tick labels the catalogue translates, which
stay while a figure draws them. Then translate the new entries and execute the notebooks
again (only those whose figures' translations changed run again).

    python -m book_build.figure_strings [--output-root .]           # update the catalogues
    python -m book_build.figure_strings --check                     # exit 1 if out of date

``--check`` lists what is missing: strings without an entry, entries without a translation.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from babel.messages.catalog import Catalog
from babel.messages.pofile import read_po, write_po
from jupyter_cache import get_cache

from attention_course.attention_view import MARKER as VIEW_MARKER
from attention_course.attention_view import translate_view

from .execute import book_pages, read_notebook
from .figures.printed_text import markdown_strings
from .figures.translation import (
    CATALOGUE,
    DATA_ROLES,
    METADATA_KEY,
    needs_translation,
    template,
    translate,
)
from .paths import LOCALES, ROOT, cache_folder

Strings = dict[tuple[str, str], list[str]]
"""(role, English string) -> the pages that draw it, in the book's order."""


def figure_strings(output_root: Path) -> tuple[Strings, list[str]]:
    """The strings every figure of the cached notebooks records, and the pages whose
    notebooks are not cached or have a figure without its renderings."""
    cache = get_cache(str(cache_folder(output_root)))
    found: Strings = {}
    missing = []
    for path in book_pages(ROOT):
        page = str(path.relative_to(ROOT))
        try:
            record = cache.match_cache_notebook(read_notebook(path))
        except KeyError:
            missing.append(page)
            continue

        def drawn(role: str, text: str, page: str = page) -> None:
            pages = found.setdefault((role, text), [])
            if page not in pages:
                pages.append(page)

        for cell in cache.get_cache_bundle(record.pk).nb.cells:
            for output in cell.get("outputs", []):
                html = output.get("data", {}).get("text/html", "")
                markdown = output.get("data", {}).get("text/markdown")
                if markdown:
                    for role, text in markdown_strings("".join(markdown)):
                        drawn(role, text)
                if VIEW_MARKER in html:
                    for role, text, _ in translate_view(html, lambda _: None)[1]:
                        drawn(role, text)
                if "image/png" not in output.get("data", {}):
                    continue
                renderings = output.get("metadata", {}).get("image/png", {}).get(METADATA_KEY)
                if not renderings:
                    missing.append(page)
                    continue
                for rendering in renderings.values():
                    for role, text, _ in rendering["texts"]:
                        drawn(role, text)
    return found, sorted(set(missing))


def entry_of(text: str, catalogue: Catalog) -> str:
    """The catalogue's entry for a figure string: the string itself if the catalogue has
    it, else its template if it has numbers (:func:`template`)."""
    return text if text in catalogue or template(text) == text else template(text)


def wanted(strings: Strings, catalogue: Catalog) -> dict[str, tuple[list[str], list[str]]]:
    """Entry (an English string or template) -> (its roles, its pages), for every entry the
    catalogue must hold: those of strings that need a translation, and those of tick labels
    it translates already."""
    translations = {m.id: m.string for m in catalogue if m.id and m.string and not m.fuzzy}
    entries: dict[str, tuple[list[str], list[str]]] = {}
    for (role, text), pages in strings.items():
        kept = role in DATA_ROLES and translate(text, translations) is not None
        if needs_translation(role, text) or kept:
            roles, where = entries.setdefault(entry_of(text, catalogue), ([], []))
            roles.append(role)
            where.extend(page for page in pages if page not in where)
    return entries


def update(path: Path, strings: Strings) -> tuple[list[str], list[str]]:
    """Bring one catalogue up to date; returns (strings added, strings dropped)."""
    with path.open("rb") as f:
        catalogue = read_po(f)
    entries = wanted(strings, catalogue)
    dropped = [m.id for m in catalogue if m.id and m.id not in entries]
    for text in dropped:
        del catalogue[text]
    added = [text for text in entries if text not in catalogue]
    for text, (roles, pages) in entries.items():
        if text not in catalogue:
            catalogue.add(text, "")
        message = catalogue[text]
        message.locations = [(page, None) for page in pages]
        message.auto_comments = [", ".join(sorted(set(roles)))]
        message.flags.clear()  # Babel guesses "python-format" from "%1" or braces in math
    with path.open("wb") as f:
        write_po(f, catalogue, width=100, include_lineno=False)
    return added, dropped


def problems(path: Path, strings: Strings) -> list[str]:
    """What a catalogue lacks: entries for strings that need one, and translations."""
    with path.open("rb") as f:
        catalogue = read_po(f)
    found = []
    for text in wanted(strings, catalogue):
        if text not in catalogue:
            found.append(f"no entry for {text!r}")
        elif not catalogue[text].string or catalogue[text].fuzzy:
            found.append(f"no translation of {text!r}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--output-root", default=str(ROOT),
                        help="the folder whose _build/ holds the cache (default: the repository)")
    parser.add_argument("--check", action="store_true",
                        help="change nothing; exit 1 if a catalogue lacks an entry or a "
                        "translation")
    args = parser.parse_args(argv)
    strings, missing = figure_strings(Path(args.output_root))
    if missing:
        print("not executed with their figures' strings (run python -m book_build.execute): "
              + ", ".join(missing), file=sys.stderr)
        return 1
    status = 0
    for path in sorted(LOCALES.glob(f"*/LC_MESSAGES/{CATALOGUE}")):
        name = path.relative_to(ROOT)
        if args.check:
            found = problems(path, strings)
            for problem in found:
                print(f"{name}: {problem}")
            status = status or int(bool(found))
        else:
            added, dropped = update(path, strings)
            print(f"{name}: {len(added)} strings added, {len(dropped)} dropped")
    return status


if __name__ == "__main__":
    sys.exit(main())
