"""The formgrader's routes: nbgrader's own handlers, guarded, and the ones it may not have.

:func:`routes` takes nbgrader's formgrader handlers as they are and changes three things:

* every page and API answer carries the course's Content-Security-Policy
  (:func:`autograder.display.csp.server`) with a nonce of its own, which nbgrader's inline
  scripts carry too (:mod:`.templates`), so that no other inline script or handler runs;
* the actions that would run plain nbgrader on students' work — autograde (their code
  outside the sandbox), generate or release feedback, assign, release, collect — answer
  ``403`` with the ``python -m autograder`` command that does the job;
* a submission's files are served only if they are images, sandboxed and never sniffed
  (the grading page shows the course's diagrams beside a notebook); nothing else a
  student handed in is served, so no script the student wrote can come from this origin.

The course's own files (MathJax and the grading page's script) are served under
``/formgrader/inert/``.
"""

from __future__ import annotations

import secrets
from pathlib import Path

from nbgrader.server_extensions.formgrader import apihandlers
from nbgrader.server_extensions.formgrader import handlers as pages
from nbgrader.server_extensions.formgrader.base import BaseHandler
from tornado import web

from ..display import csp, mathjax

STATIC_ROUTE = "/formgrader/inert"
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp"})
REFUSED = {
    apihandlers.AutogradeHandler: "python -m autograder grade",
    apihandlers.GenerateAllFeedbackHandler: "python -m autograder feedback",
    apihandlers.GenerateFeedbackHandler: "python -m autograder feedback",
    apihandlers.ReleaseAllFeedbackHandler: "python -m autograder feedback",
    apihandlers.ReleaseFeedbackHandler: "python -m autograder feedback",
    apihandlers.AssignHandler: "python -m autograder release",
    apihandlers.ReleaseHandler: "python -m autograder release",
    apihandlers.UnReleaseHandler: "python -m autograder release",
    apihandlers.CollectHandler: "python -m autograder collect",
}


class Guarded:
    """Mixin for nbgrader's handlers: the response's nonce, in the policy and in every
    template nbgrader renders."""

    @property
    def csp_nonce(self) -> str:
        nonce = getattr(self, "_csp_nonce", None)
        if nonce is None:
            nonce = self._csp_nonce = secrets.token_urlsafe(18)
        return nonce

    @property
    def content_security_policy(self) -> str:
        return csp.server(self.csp_nonce, self.settings.get("autograder_handler_hashes", ()))

    def render(self, name: str, **namespace) -> str:
        return super().render(name, csp_nonce=self.csp_nonce, **namespace)


class Refused(Guarded, BaseHandler):
    """An action of nbgrader's formgrader that this course does with its own command."""

    def initialize(self, command: str) -> None:
        self.command = command

    @web.authenticated
    def post(self, *args: str) -> None:
        self.set_status(403)
        self.finish({"success": False, "error": (
            f"Not here: the course's formgrader grades by hand only. Run `{self.command}` "
            "in the course directory (see the README)."), "log": ""})

    get = put = post


class SubmissionImages(Guarded, pages.SubmissionFilesHandler):
    """A file of a submission, if it is an image: sandboxed, never sniffed."""

    @property
    def content_security_policy(self) -> str:
        return csp.FILE

    def validate_absolute_path(self, root: str, absolute_path: str) -> str | None:
        if Path(absolute_path).suffix.lower() not in IMAGE_SUFFIXES:
            raise web.HTTPError(404)
        return super().validate_absolute_path(root, absolute_path)

    def set_extra_headers(self, path: str) -> None:
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Disposition", "inline")


def _guarded(handler: type) -> type:
    if handler is pages.SubmissionFilesHandler:
        return SubmissionImages
    if issubclass(handler, BaseHandler):
        return type(handler.__name__, (Guarded, handler), {"__doc__": handler.__doc__})
    return handler


def routes() -> list[tuple]:
    """Every route of the course's formgrader (paths without the server's base URL)."""
    found = []
    for pattern, handler, *kwargs in pages.default_handlers + apihandlers.default_handlers:
        if handler in REFUSED:
            found.append((pattern, Refused, {"command": REFUSED[handler]}))
        else:
            found.append((pattern, _guarded(handler), *kwargs))
    return [
        (rf"{STATIC_ROUTE}/mathjax/(.*)", web.StaticFileHandler,
         {"path": str(mathjax.mathjax_root())}),
        (rf"{STATIC_ROUTE}/(.*)", web.StaticFileHandler, {"path": str(mathjax.STATIC)}),
        *found,
        (r"/formgrader/static/(.*)", web.StaticFileHandler, {"path": pages.static_path}),
        (r"/formgrader/.*", _guarded(pages.Template404)),
    ]
