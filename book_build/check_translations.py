"""Check translated gettext catalogues: every entry translated, markup preserved.

    python -m book_build.check_translations locales/zh_CN/LC_MESSAGES/**/*.po

The catalogues (one per page, made by Sphinx's gettext builder) hold the translation of
every paragraph, heading and caption of the book, written in MyST Markdown like the source.

For every entry: msgstr is not empty; the MyST roles keep their targets ({term}`x`,
{term}`text <x>`, {doc}, {cite:p}, {eq}, {ref}, ...: the translated text may translate a
role's display text only in the explicit `text <target>` form, and must keep the target);
math ($...$, $$...$$) and inline code (`...`) are identical, as multisets, but for the words
of math in ``\text{...}``, which are prose and translated (``\text{otherwise}`` ->
``\text{否则}``, in the order Chinese needs); the catalogue compiles (Babel's .mo
writer). Prints the problems and exits 1 if there are any.
"""

from __future__ import annotations

import io
import re
import sys
from collections import Counter
from pathlib import Path

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po

ROLE = re.compile(r"\{([\w:-]+)\}`([^`]*)`")
MATH = re.compile(r"\$\$.+?\$\$|\$[^$\n]+\$", re.S)
CODE = re.compile(r"(?<![}`])`([^`]+)`(?!`)")
MATH_TEXT = re.compile(r"\\(?:text|textrm|textit|textbf|mbox)\{(?:[^{}]|\{[^{}]*\})*\}")


def math_of(text: str) -> Counter:
    """The math of a string, counted, without its ``\\text{...}`` (their words are prose,
    which a translation may order otherwise: ``\\text{if } i \\text{ is kept}`` ->
    ``\\text{若 } i \\text{ 被保留}``) and with its spaces normalised."""
    return Counter(" ".join(MATH_TEXT.sub(" ", math).split()) for math in MATH.findall(text))


def role_targets(text: str) -> Counter:
    """The (role, target) pairs of a string's MyST roles, counted."""
    found = Counter()
    for role, body in ROLE.findall(text):
        explicit = re.fullmatch(r"(?s).*<([^<>]+)>\s*", body)
        target = explicit.group(1) if explicit else body
        if role == "term":
            target = target.lower()
        found[(role, target.strip())] += 1
    return found


def without_roles(text: str) -> str:
    """The string with its MyST roles removed."""
    return ROLE.sub("", text)


def problems_of(path: Path) -> list[str]:
    """What is wrong with one catalogue (empty if nothing)."""
    with path.open("rb") as f:
        catalog = read_po(f)
    problems = []
    for message in catalog:
        if not message.id:
            continue
        where = f"{path}:{message.lineno}"
        if not message.string:
            problems.append(f"{where}: not translated: {message.id[:60]!r}")
            continue
        if "fuzzy" in message.flags:
            problems.append(f"{where}: fuzzy")
        source, target = message.id, message.string
        if role_targets(source) != role_targets(target):
            problems.append(f"{where}: roles differ: "
                            f"{sorted(role_targets(source) - role_targets(target))} missing, "
                            f"{sorted(role_targets(target) - role_targets(source))} extra")
        math_source, math_target = math_of(source), math_of(target)
        if math_source != math_target:
            problems.append(f"{where}: math differs: {sorted(math_source - math_target)}")
        code_source = Counter(CODE.findall(without_roles(MATH.sub('', source))))
        code_target = Counter(CODE.findall(without_roles(MATH.sub('', target))))
        if code_source != code_target:
            problems.append(f"{where}: inline code differs: "
                            f"{sorted(code_source - code_target)} missing, "
                            f"{sorted(code_target - code_source)} extra")
    try:
        write_mo(io.BytesIO(), catalog)
    except Exception as error:  # noqa: BLE001 - any failure to compile is the problem
        problems.append(f"{path}: does not compile: {error}")
    return problems


def main(paths: list[str]) -> int:
    problems = [p for path in paths for p in problems_of(Path(path))]
    print("\n".join(problems) if problems else f"{len(paths)} catalogue(s) OK")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
