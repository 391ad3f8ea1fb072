"""HTML a student controls, made inert: :func:`clean_html`, with nh3 (Ammonia).

A student's markdown (rendered), the HTML their code displays and the HTML nbconvert makes
of it all pass through :func:`clean_html` before a person sees them. What stays is what a
grader reads — text, headings, lists, tables, code, emphasis, links to the web, images
carried in the notebook itself — and nothing that runs, loads or submits anything:

* no script, style, form, frame, object, SVG or MathML element, no ``<meta>``, ``<base>``
  or ``<link>``; ``<script>``, ``<style>`` and the like lose their content too;
* no event handler, ``style``, ``id`` or ``name`` attribute (an ``id`` could stand in for
  the grading form's fields, DOM clobbering); ``class`` only from the short list nbconvert
  and pandas use to colour code and tables, never one of the formgrader's own;
* links only to ``http``, ``https``, ``mailto`` or the page itself, opened without a
  referrer; images only from ``data:image/…;base64`` (plots, pasted images) or a bare file
  name beside the notebook (the course's diagrams), with numeric sizes.

MathJax typesets the ``$…$`` text that remains; see :mod:`.mathjax` for how it is confined.
"""

from __future__ import annotations

import re

import nh3

# What a reader needs of a notebook, from Ammonia's own safe list (no image maps).
TAGS = frozenset(nh3.ALLOWED_TAGS - {"map", "area"} | {"tfoot"})
# Elements removed with everything inside them (not just the tags).
DROPPED_WITH_CONTENT = frozenset({
    "script", "style", "template", "noscript", "title", "textarea", "select", "option",
    "iframe", "frame", "frameset", "object", "embed", "applet", "svg", "math", "head",
    "button", "form", "noembed", "noframes", "xmp", "plaintext",
})
_TABLE_CELL = {"colspan", "rowspan", "align", "scope"}
ATTRIBUTES = {
    "*": {"class", "lang", "dir", "title"},
    "a": {"href"},
    "img": {"src", "alt", "width", "height"},
    "td": _TABLE_CELL, "th": _TABLE_CELL,
    "ol": {"start"},
    "col": {"span"}, "colgroup": {"span"},
}
# URL schemes Ammonia lets through to the filter below, which decides per attribute.
_SCHEMES = {"http", "https", "mailto", "data"}
_LINK = re.compile(r"^(?:https?://|mailto:|#)", re.IGNORECASE)
_DATA_IMAGE = re.compile(r"^data:image/(?:png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=\s]*$",
                         re.IGNORECASE)
_BESIDE = re.compile(r"^[\w][\w.-]*\.(?:png|jpe?g|gif|svg|webp)$", re.IGNORECASE)
_SIZE = re.compile(r"^\d{1,5}(?:px|%)?$")
_CLASS = re.compile(r"^(?:[a-z]{1,3}\d?|highlight|hl-[a-z0-9]+|dataframe|ansi-[a-z-]+)$")


def _attribute(tag: str, name: str, value: str) -> str | None:
    """Keep, change or (``None``) drop one attribute that Ammonia allowed."""
    if name == "href":
        return value if _LINK.match(value.strip()) else None
    if name == "src":
        value = value.strip()
        return value if _DATA_IMAGE.match(value) or _BESIDE.match(value) else None
    if name in ("width", "height"):
        return value if _SIZE.match(value.strip()) else None
    if name == "class":
        kept = [token for token in value.split() if _CLASS.match(token)]
        return " ".join(kept) or None
    return value


def clean_html(fragment: object) -> str:
    """``fragment`` (HTML from a student's notebook, as ``str`` or ``bytes``) without
    anything that could run, load or submit: see the module's docstring."""
    text = fragment.decode("utf-8", "replace") if isinstance(fragment, bytes) \
        else str(fragment)
    return nh3.clean(text, tags=set(TAGS), clean_content_tags=set(DROPPED_WITH_CONTENT),
                     attributes={tag: set(names) for tag, names in ATTRIBUTES.items()},
                     url_schemes=set(_SCHEMES), attribute_filter=_attribute,
                     link_rel="noopener noreferrer nofollow", strip_comments=True)
