"""One term per concept: no concept of the course written two ways in a translation.

    python -m book_build.check_terms [--language zh_CN]

A translation reads as one book when each concept has one name: 汇聚 for pooling on every
page, not 汇聚 on one and 池化 on the next. ``locales/<language>/terms.toml`` lists the
concepts a reviewer found written more than one way, each with the course's word for it
(``term``; where the concept has a glossary entry, ``glossary`` names it and the term
holds the entry's Chinese name or is held by it) and the other ways (``not``). This
check reads every translation of the language -- the pages' and the exercises' catalogues, and the
catalogue of what the code draws and prints (``figures.po``) -- and lists every
translation that writes a concept another way, with its file and line; it exits 1 if there
is any.
"""

from __future__ import annotations

import argparse
import sys
import tomllib
from dataclasses import dataclass
from pathlib import Path

from babel.messages.pofile import read_po

from .extensions.chinese_search import GLOSSARY, glossary_terms
from .paths import LOCALES, ROOT

TERMS = "terms.toml"


@dataclass(frozen=True)
class Concept:
    name: str
    term: str
    variants: tuple[str, ...]
    glossary: str | None = None


def concepts(language: str, locales: Path = LOCALES) -> list[Concept]:
    """The concepts of ``locales/<language>/terms.toml`` (none if there is no file)."""
    path = locales / language / TERMS
    if not path.is_file():
        return []
    table = tomllib.loads(path.read_text(encoding="utf-8"))
    return [Concept(name, entry["term"], tuple(entry.get("not", [])), entry.get("glossary"))
            for name, entry in table.items()]


def glossary_problems(found: list[Concept], glossary: Path) -> list[str]:
    """A concept whose term is not in its glossary entry's Chinese name."""
    names = dict(glossary_terms(glossary))
    problems = []
    for concept in found:
        if concept.glossary is None:
            continue
        if concept.glossary not in names:
            problems.append(f"{TERMS}: [{concept.name}]: no glossary entry "
                            f"{concept.glossary!r}")
        elif not (concept.term in names[concept.glossary]
                  or names[concept.glossary] in concept.term):
            problems.append(f"{TERMS}: [{concept.name}]: the glossary names "
                            f"{concept.glossary!r} {names[concept.glossary]!r}, which neither "
                            f"holds {concept.term!r} nor is held by it")
    return problems


def variant_uses(found: list[Concept], catalogues: list[Path]) -> list[str]:
    """Every translated message that writes a concept another way: ``file:line: concept:
    'variant' (the course's term: 'term')``."""
    problems = []
    for path in catalogues:
        with path.open("rb") as f:
            catalogue = read_po(f)
        for message in catalogue:
            if not message.id or not isinstance(message.string, str):
                continue
            for concept in found:
                for variant in concept.variants:
                    if variant in message.string:
                        problems.append(f"{path}:{message.lineno}: {concept.name}: "
                                        f"{variant!r} (the course's term: {concept.term!r})")
    return problems


def problems(language: str, locales: Path = LOCALES, root: Path = ROOT) -> list[str]:
    found = concepts(language, locales)
    catalogues = sorted((locales / language / "LC_MESSAGES").rglob("*.po"))
    return glossary_problems(found, root / GLOSSARY) + variant_uses(found, catalogues)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--language", default="zh_CN")
    args = parser.parse_args(argv)
    found = problems(args.language)
    print("\n".join(found) if found else
          f"{args.language}: one term per concept ({len(concepts(args.language))} checked)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
