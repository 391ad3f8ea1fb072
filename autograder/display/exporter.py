"""nbconvert's HTML exporter for a notebook a student handed in: :class:`InertHTMLExporter`.

Both places where a person looks at a submission render it with this exporter and
nbgrader's own templates: nbgrader's formgrader (``formgrade``) and the annotated notebook
of a feedback page (``feedback``). Against the plain ``HTMLExporter`` it

1. renders :func:`~.notebook.inert_notebook`'s copy of the notebook, before any other
   step (so no preprocessor or template ever sees an output, metadata or attachment as
   the student left them);
2. cleans every piece of HTML the templates take from the notebook with
   :func:`~.html.clean_html`: rendered markdown — answers, the grader's comments, markdown
   outputs (nbgrader's templates never pass markdown to a cleaning filter, so the
   ``markdown2html`` filter cleans itself) — HTML outputs and raw cells; nbconvert's own
   ``sanitize_html`` mode is on, so outputs that can only run (JavaScript, widgets) are not
   rendered at all;
3. leaves a pasted image the notebook lost out (with its text) instead of failing the
   whole page, and never reads an image from disk into the page;
4. puts a Content-Security-Policy ``<meta>`` first in the page's head
   (``content_security_policy``, or ``resources["content_security_policy"]``);
5. loads MathJax from ``static_base`` (the course's copy, see :mod:`.mathjax`), through
   the templates of ``templates/``, found before nbconvert's and nbgrader's:
   ``mathjax.html.j2`` (every template's ``mathjax()``) and ``formgrade_macros.html.j2``
   (the formgrader page's header and navigation bar, without inline scripts).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from bs4 import BeautifulSoup
from jinja2 import FileSystemLoader, pass_context
from nbconvert.exporters import HTMLExporter
from nbconvert.filters.markdown_mistune import IPythonRenderer, MarkdownWithMath
from nbformat import NotebookNode
from traitlets import Unicode, default

from . import csp, mathjax
from .html import clean_html
from .notebook import inert_notebook

TEMPLATES = Path(__file__).resolve().parent / "templates"


class _InertRenderer(IPythonRenderer):
    """nbconvert's markdown renderer, but a missing attachment leaves its image out."""

    def _embed_image_or_attachment(self, src: str) -> str:
        name = src.removeprefix("attachment:")
        if src.startswith("attachment:") and name not in self.attachments:
            return ""
        return super()._embed_image_or_attachment(src)


class InertHTMLExporter(HTMLExporter):
    """HTML of a notebook a student controls, with nothing in it that can act: see the
    module's docstring."""

    content_security_policy = Unicode(
        csp.NOTEBOOK, help="The page's Content-Security-Policy (a <meta> first in its head)"
    ).tag(config=True)
    static_base = Unicode(
        "../../_static", help="URL of the folder that holds mathjax-config.js and mathjax/ "
        "(relative to the page, or absolute)").tag(config=True, affects_environment=True)

    @default("sanitize_html")
    def _sanitize_html_default(self) -> bool:
        return True

    @default("exclude_anchor_links")
    def _exclude_anchor_links_default(self) -> bool:
        return True

    @default("extra_loaders")
    def _extra_loaders_default(self) -> list:
        return [FileSystemLoader(str(TEMPLATES))]

    def _create_environment(self):
        environment = super()._create_environment()
        environment.globals["mathjax_scripts"] = mathjax.scripts(self.static_base.rstrip("/"))
        environment.globals["inert_static"] = self.static_base.rstrip("/")
        return environment

    @pass_context
    def markdown2html(self, context, source: str) -> str:
        """Markdown (with math) to HTML, as nbconvert renders it, then cleaned."""
        cell = context.get("cell", {})
        renderer = _InertRenderer(escape=False, attachments=cell.get("attachments", {}),
                                  embed_images=False, anchor_link_text=self.anchor_link_text,
                                  exclude_anchor_links=True)
        return clean_html(MarkdownWithMath(renderer=renderer).render(source))

    def default_filters(self):
        yield from super().default_filters()
        yield ("clean_html", clean_html)
        yield ("markdown2html", self.markdown2html)

    def from_notebook_node(self, nb: NotebookNode, resources: dict | None = None,
                           **kw: Any) -> tuple[str, dict]:
        policy = (resources or {}).get("content_security_policy", self.content_security_policy)
        html, resources = super().from_notebook_node(inert_notebook(nb), resources, **kw)
        return _with_policy(html, policy), resources


def _with_policy(html: str, policy: str) -> str:
    """``html`` with a ``<meta>`` of ``policy`` first in its head (a head is made if the
    page has none)."""
    soup = BeautifulSoup(html, features="html.parser")
    meta = BeautifulSoup(csp.meta(policy), features="html.parser").meta
    if soup.head is None:
        return csp.meta(policy) + html
    soup.head.insert(0, meta)
    return str(soup)
