"""Reading a gettext catalogue (``.po``): the one reader of the course's translations.

The book's pages, figures and interactive views and the exercises' notebooks are
translated from catalogues in ``locales/`` (see :mod:`.languages`); each user — the grader's
release, the book's build, the kernels that render figures — reads them with
:func:`translated_entries`. Babel is imported when a catalogue is read, not before.
"""

from __future__ import annotations

from pathlib import Path


def translated_entries(path: Path) -> dict[str, str]:
    """{msgid: msgstr} of the catalogue at ``path``: its translated entries only. An
    entry without a translation, or marked fuzzy, is not one (as for Sphinx, which leaves
    fuzzy entries out of the compiled catalogue)."""
    from babel.messages.pofile import read_po

    with path.open("rb") as handle:
        catalogue = read_po(handle)
    return {message.id: message.string for message in catalogue
            if message.id and isinstance(message.id, str) and message.string
            and not message.fuzzy}
