"""The class-report service: a Tornado application authenticated by the hub (and, public,
the tool's LTI key set at ``lti/jwks.json``)."""

from __future__ import annotations

import argparse
import json
import os
import secrets
from html import escape

from jupyterhub.services.auth import HubOAuthCallbackHandler, HubOAuthenticated
from jupyterhub.utils import url_path_join
from tornado import ioloop, web

from ..commands.report import load_batch, render
from ..commands.serve import waiting
from ..course import Course
from ..course.exchange import Exchange
from ..display import csp
from ..lms.lti.keys import ensure_private_key, public_jwks
from ..lms.lti.settings import LtiSettingsError
from ..lms.lti.settings import load as lti_settings


class _Page(HubOAuthenticated, web.RequestHandler):
    """A page only the hub's instructors may open."""

    def initialize(self, course: Course, exchange: Exchange | None) -> None:
        self.course, self.exchange = course, exchange

    def set_default_headers(self) -> None:
        self.set_header("Content-Security-Policy", csp.PAGE)
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Cache-Control", "no-store")


class KeySetHandler(web.RequestHandler):
    """The tool's public key set (JWKS), for the LMS the course is registered with over LTI
    (``lti.toml``): public, as a platform fetches it without logging in; 404 without a
    registration. The private key is made on first use and never leaves the course."""

    def initialize(self, course: Course, exchange: Exchange | None) -> None:
        self.course = course

    def get(self) -> None:
        try:
            settings = lti_settings(self.course)
        except LtiSettingsError:
            settings = None
        if settings is None:
            raise web.HTTPError(404)
        self.set_header("Content-Type", "application/json")
        self.set_header("Cache-Control", "max-age=300")
        self.write(json.dumps(public_jwks(ensure_private_key(settings.private_key))))


class IndexHandler(_Page):
    @web.authenticated
    def get(self) -> None:
        assignments = self.course.assignments()
        waiting_now = waiting(self.course, self.exchange, assignments) if self.exchange else []
        rows = "".join(
            f'<tr><td><a href="{escape(url_path_join(self.request.path, a))}">{escape(a)}</a>'
            f"</td><td>{sum(1 for w in waiting_now if w.assignment == a)}</td></tr>"
            for a in assignments)
        user = escape(self.get_current_user()["name"])
        self.write(f"""<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Class report</title></head><body><h1>Class report</h1>
<p>Signed in as {user}, an instructor. Each report is computed when you open it.</p>
<table><tr><th>assignment</th><th>submissions waiting to be graded</th></tr>{rows}</table>
</body></html>""")


class ReportHandler(_Page):
    @web.authenticated
    def get(self, assignment: str) -> None:
        if assignment not in self.course.assignments():
            raise web.HTTPError(404)
        self.write(render(load_batch(self.course, assignment)))


def application(course: Course, exchange: Exchange | None, prefix: str) -> web.Application:
    settings = {"course": course, "exchange": exchange}
    return web.Application([
        (prefix, IndexHandler, settings),
        (url_path_join(prefix, "oauth_callback"), HubOAuthCallbackHandler),
        (url_path_join(prefix, "lti/jwks.json"), KeySetHandler, settings),
        (url_path_join(prefix, r"([A-Za-z0-9][A-Za-z0-9_.-]*)"), ReportHandler, settings),
    ], cookie_secret=secrets.token_bytes(32))


def main() -> None:
    parser = argparse.ArgumentParser(prog="python -m autograder.classview")
    parser.add_argument("--root", default=".")
    parser.add_argument("--db", default=os.environ.get("AUTOGRADER_DB"),
                        help="the gradebook's database URL, as for python -m autograder "
                        "(default: $AUTOGRADER_DB, else gradebook.db in the course)")
    parser.add_argument("--exchange")
    parser.add_argument("--course-id")
    args = parser.parse_args()
    url = os.environ["JUPYTERHUB_SERVICE_URL"]          # set by the hub that starts it
    prefix = os.environ.get("JUPYTERHUB_SERVICE_PREFIX", "/services/class-report/")
    app = application(Course.at(args.root, args.db),
                      Exchange.named(args.exchange, args.course_id), prefix)
    from urllib.parse import urlparse

    address = urlparse(url)
    app.listen(address.port, address.hostname)
    ioloop.IOLoop.current().start()
