"""The download menu of sphinx-book-theme's page header: one more entry at its top.

Used by :mod:`.exercise_buttons` (an exercise's ``.zip``) and :mod:`.chapter_downloads` (a
chapter's ``.ipynb``), from their ``html-page-context`` handlers, which run after the theme
has put its buttons in the page's context.
"""

from __future__ import annotations


def add_download(context: dict, pagename: str, suffix: str, tooltip: str, icon: str,
                 label: str) -> None:
    """Put a link to ``<pagename><suffix>`` (next to the page) first in its download menu."""
    for group in context.get("header_buttons") or []:
        if group.get("label") == "download-buttons":
            group["buttons"].insert(0, {
                "type": "link",
                "url": context["pathto"](f"{pagename}{suffix}", 1),
                "text": suffix,
                "tooltip": tooltip,
                "icon": icon,
                "label": label,
            })
