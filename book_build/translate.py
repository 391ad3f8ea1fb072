"""The translated sites, and the catalogues they are built from.

    python -m book_build.translate build  [--language zh_CN] [--output-root DIR]
    python -m book_build.translate update [--language zh_CN]

``build`` makes the Chinese site (``make book`` runs it after the English build) from the
same pages, configuration and *executed outputs* as the English one: it reads the same
jupyter-cache (``_build/.jupyter_cache``), so no notebook runs again. Sphinx translates
each page with its catalogue ``locales/<language>/LC_MESSAGES/<page>.po``
(``gettext_compact = False``: one catalogue per page) and
:mod:`book_build.extensions.languages` stops the build if a message has no translation.
The site is built in ``_build/<language>/html`` (MyST-NB keeps its executed notebooks beside the
output folder, which must not end up in the published site) and then copied to
``_build/html/zh/``, next to the English one.

``update`` is for contributors who changed an English page: it extracts the book's
messages with Sphinx's gettext builder into ``_build/gettext`` (from the cached outputs,
for the alt text of output figures; ``make translations`` executes what is not cached)
and merges them into the catalogues with ``sphinx-intl update``: new messages come in
untranslated, changed ones marked fuzzy with the old translation as a start. Translate
them (any PO editor, or the file itself), and ``make book`` builds again.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
from pathlib import Path

from autograder.course import languages

from .paths import LOCALES, ROOT, build_folder, cache_folder

OUTPUT_IMAGES = [("gettext", mime, rank) for rank, mime in
                 enumerate(["image/svg+xml", "image/png", "image/jpeg", "image/gif"])]
"""The outputs the gettext builder keeps (MyST-NB keeps none for it by default): images,
whose alt text is offered for translation (other outputs are shared, not translated)."""


def overrides(language: str | None, cache: Path, **extra) -> dict:
    """Sphinx settings on top of ``_config.yml`` for a build in ``language``."""
    settings = {
        "external_toc_path": (ROOT / "_toc.yml").as_posix(),
        "latex_individualpages": False,
        "locale_dirs": [str(LOCALES)],
        "gettext_compact": False,
        "nb_execution_cache_path": str(cache),
        **extra,
    }
    if language:
        settings["language"] = language
    return settings


def sphinx_build(outdir: Path, doctrees: Path, builder: str, settings: dict,
                 strict: bool = False) -> int:
    """One build with jupyter-book's configuration (``_config.yml``, ``_toc.yml``);
    ``strict``: any warning (e.g. a figure's string without its translation) fails it,
    after every warning has been reported."""
    from jupyter_book.sphinx import build_sphinx

    result = build_sphinx(str(ROOT), str(outdir), noconfig=True,
                          path_config=str(ROOT / "_config.yml"), confoverrides=settings,
                          doctreedir=str(doctrees), builder=builder,
                          warningiserror=strict, keep_going=strict)
    return result if isinstance(result, int) else 1


def site_folder(code: str) -> str:
    """Where the site in ``code`` goes, inside the English site's folder."""
    return languages.language(code).site_folder


def build(language: str, output_root: Path) -> int:
    """Build the site in ``language`` and put it in ``_build/html/<folder>/``."""
    build_dir = build_folder(output_root)
    outdir = build_dir / language / "html"
    status = sphinx_build(outdir, build_dir / language / ".doctrees", "html",
                          overrides(language, cache_folder(output_root)), strict=True)
    if status != 0:
        return status
    published = build_dir / "html" / site_folder(language)
    if published.exists():
        shutil.rmtree(published)
    shutil.copytree(outdir, published, ignore=shutil.ignore_patterns(".buildinfo"))
    print(f"The {language} website is in {published / 'index.html'}")
    return 0


def relative_to_the_repository(pot_dir: Path) -> None:
    """Sphinx writes each message's location relative to the gettext output folder
    (``#: ../../book/intro.md:3``); the catalogues name the page as the repository does."""
    prefix = "#: " + "../" * len(pot_dir.relative_to(ROOT).parts)
    for pot in pot_dir.rglob("*.pot"):
        text = pot.read_text(encoding="utf-8")
        pot.write_text(text.replace(prefix, "#: ").replace(" " + prefix[3:], " "),
                       encoding="utf-8")


def update(language: str) -> int:
    """Extract the messages of every page and merge them into ``language``'s catalogues."""
    build_dir = build_folder()
    pot_dir = build_dir / "gettext"
    status = sphinx_build(pot_dir, build_dir / "gettext-doctrees", "gettext",
                          overrides(None, cache_folder(),
                                    nb_mime_priority_overrides=OUTPUT_IMAGES))
    if status != 0:
        return status
    relative_to_the_repository(pot_dir)
    intl = Path(sys.executable).parent / "sphinx-intl"
    return subprocess.run([str(intl), "update", "--pot-dir", str(pot_dir),
                           "--locale-dir", str(LOCALES), "--language", language,
                           "--line-width", "-1"],
                          check=False).returncode


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("command", choices=["build", "update"])
    parser.add_argument("--language", default=languages.TRANSLATIONS[0],
                        choices=sorted(languages.TRANSLATIONS))
    parser.add_argument("--output-root", type=Path, default=ROOT,
                        help="the folder whose _build/ holds the English site and the cache "
                             "(as jupyter-book's --path-output)")
    args = parser.parse_args(argv)
    if args.command == "build":
        return build(args.language, args.output_root.resolve())
    return update(args.language)


if __name__ == "__main__":
    sys.exit(main())
