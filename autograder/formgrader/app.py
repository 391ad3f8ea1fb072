"""The course's formgrader server: nbgrader's formgrader alone, for grading by hand.

``python -m autograder.formgrader`` (``make formgrader``) starts a Jupyter server on
127.0.0.1 that serves nbgrader's formgrader pages for the course directory it is started
in, and nothing else: no other server extension is loaded (no JupyterLab, no notebooks),
and :class:`FormgraderOnly` refuses the server's kernels, sessions, terminals, files,
contents and conversions, so that even a script that ran in a grading page could not
start code or read a file through the server. Student work is rendered by
:class:`~autograder.display.exporter.InertHTMLExporter`, and every page carries a strict
Content-Security-Policy (:mod:`.handlers`, :mod:`.templates`).
"""

from __future__ import annotations

import os
import sys

from jupyter_server.auth.authorizer import Authorizer
from jupyter_server.extension.application import ExtensionApp
from nbgrader.server_extensions.formgrader import handlers as pages
from nbgrader.server_extensions.formgrader.formgrader import FormgradeExtension

from ..display import csp
from ..display.exporter import InertHTMLExporter
from . import templates
from .handlers import STATIC_ROUTE, routes


class FormgraderOnly(Authorizer):
    """Only the formgrader: of the Jupyter server's own REST API, just its status."""

    ALLOWED = frozenset({("api", "read")})

    def is_authorized(self, handler, user, action: str, resource: str) -> bool:
        return (resource, action) in self.ALLOWED


class Formgrader(ExtensionApp):
    """nbgrader's formgrader, with students' work inert and nothing else on the server."""

    name = "autograder_formgrader"
    description = "nbgrader's formgrader for the course: grading by hand, nothing else"
    load_other_extensions = False
    default_url = "/formgrader"
    serverapp_config = {
        "ip": "127.0.0.1",
        "open_browser": False,
        "terminals_enabled": False,
        "authorizer_class": FormgraderOnly,
        "tornado_settings": {"headers": {"Content-Security-Policy": csp.server()}},
    }

    @classmethod
    def get_extension_package(cls) -> str:
        return "autograder.formgrader"

    def initialize_settings(self) -> None:
        webapp = self.serverapp.web_app
        formgrader = FormgradeExtension(parent=self.serverapp)
        formgrader.root_dir = self.serverapp.root_dir
        formgrader.log = self.log
        formgrader.initialize([])
        formgrader.init_tornado_settings(webapp)
        base_url = webapp.settings["base_url"].rstrip("/")
        self.settings.update(
            nbgrader_exporter=InertHTMLExporter(
                config=formgrader.config, static_base=f"{base_url}{STATIC_ROUTE}",
                content_security_policy=csp.server()),
            nbgrader_jinja2_env=templates.environment(pages.template_path),
            autograder_handler_hashes=templates.handler_hashes(pages.template_path),
        )

    def initialize_handlers(self) -> None:
        self.handlers.extend(routes())


def main() -> None:
    """Start the server in the current directory (the course directory)."""
    Formgrader.launch_instance(argv=[f"--ServerApp.root_dir={os.getcwd()}", *sys.argv[1:]])
