"""LTI 1.3 launches into the course's hub: students and instructors arrive from Canvas or
Moodle with one click (the hub's configuration turns it on when the course has an
``lti.toml``, :mod:`autograder.lms.lti.settings`).

The OpenID Connect flow is jupyterhub-ltiauthenticator's (its login initiation at
``/hub/lti13/oauth_login``, its authentication request with state and nonce kept in
encrypted cookies, its callback at ``/hub/lti13/oauth_callback`` verifying the id_token's
signature against the platform's JWKS, ``iss``, ``aud``, ``exp`` and ``iat``). What it
leaves out, this module adds: the ``deployment_id`` must be the registered one, ``azp`` (when
given) the client id, the LTI ``version`` 1.3.0, the ``message_type`` one the course
answers, and a ``nonce`` is accepted once only (kept by the hub until the token expires,
in a file of its state folder that outlives a restart, not only in a cookie a replayed
request could carry along).

Who is who, never merged: the platform's user (``sub``) is the hub user the course's LMS
roster (``lms-roster.json``) already knows as ``lti:<sub>``; else the one whose ``email:``
key (roster) or email (class list's optional third column) is the launch's email — then
``lti:<sub>`` is remembered in the roster for a student, so grades go back to the same
person. Learners are students; instructors and teaching assistants are instructors, and
only if the class list names that user one. Anyone else is refused with a page that says
so; no account is ever guessed.

Deep linking: an instructor's ``LtiDeepLinkingRequest`` shows the course's assignments;
those chosen go back to the platform as one ``ltiResourceLink`` each (custom parameter
``assignment``) with its ``lineItem`` (tag and resourceId the assignment's name, the tag
grade passback finds it by), in an ``LtiDeepLinkingResponse`` signed with the tool's key.
Such a link opens the student's JupyterLab in the assignment's folder, fetched for them
first (nbgrader's fetch, run as the student) if they had not fetched it.

The local login (PAM, ``/hub/login``) stays as it was.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import pwd
import secrets
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import parse_qs, quote, urlsplit

import jwt
from jupyterhub.auth import Authenticator, PAMAuthenticator
from jupyterhub.handlers import BaseHandler
from jupyterhub.handlers.login import LoginHandler
from jupyterhub.utils import url_path_join
from ltiauthenticator.lti13.auth import LTI13Authenticator
from ltiauthenticator.lti13.error import InvalidAudienceError, ValidationError
from ltiauthenticator.lti13.handlers import LTI13CallbackHandler, LTI13LoginInitHandler
from tornado import web
from traitlets import Dict, Unicode

from autograder.course import Course
from autograder.course.records import updating
from autograder.lms.lti.keys import public_jwk
from autograder.lms.roster import LTI_KEY, Roster, email_key, lti_key

from .settings import INSTRUCTOR, STUDENT, Member, read_class

CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
CLAIM_DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
CLAIM_DL_CONTENT_ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
CLAIM_DL_DATA = "https://purl.imsglobal.org/spec/lti-dl/claim/data"
LEARNER_ROLES = frozenset({"http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"})
INSTRUCTOR_ROLES = frozenset({
    "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor",
    "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"})
RESOURCE_LINK, DEEP_LINKING = "LtiResourceLinkRequest", "LtiDeepLinkingRequest"
NOT_LISTED = "You are not on this course's class list — ask your instructor."
FETCH_SECONDS = 120       # nbgrader's fetch for a student who launches an assignment


class Refused(web.HTTPError):
    """A launch refused: 403, with a page saying why."""

    def __init__(self, message: str) -> None:
        super().__init__(403, message)
        self.jupyterhub_message = message


class VerifiedLaunch(dict):
    """The claims of an id_token this module verified: the only data the authenticator
    takes as a launch (a form posted to the login page is a plain dict of strings)."""


# ---- the checks the library leaves out ---------------------------------------------------

class Nonces:
    """Nonces seen, each kept until its token's expiry (ten minutes at least): a nonce is
    accepted once. Kept in a file of the hub's state (under its lock, see
    :mod:`autograder.course.records`), so a launch captured before the hub restarts is
    still refused after it."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def use(self, nonce: str, expires: float) -> bool:
        now = time.time()
        with updating(self.path) as seen:
            for old in [n for n, ends in seen.items() if ends <= now]:
                del seen[old]
            if nonce in seen:
                return False
            seen[nonce] = max(expires, now + 600)
            return True


def check_claims(claims: dict, client_id: str, deployment_id: str) -> None:
    """What LTI 1.3 asks of a launch beyond the OIDC checks; :class:`ValidationError`."""
    azp = claims.get("azp")
    if azp is not None and azp != client_id:
        raise InvalidAudienceError(f"azp {azp!r} is not this tool's client id")
    if claims.get(CLAIM + "version") != "1.3.0":
        raise ValidationError(f"LTI version {claims.get(CLAIM + 'version')!r}, not 1.3.0")
    if claims.get(CLAIM + "deployment_id") != deployment_id:
        raise ValidationError(f"deployment {claims.get(CLAIM + 'deployment_id')!r} is not "
                              "the course's")
    if claims.get(CLAIM + "message_type") not in (RESOURCE_LINK, DEEP_LINKING):
        raise ValidationError(f"message type {claims.get(CLAIM + 'message_type')!r}")
    if not isinstance(claims.get("nonce"), str) or not claims["nonce"]:
        raise ValidationError("no nonce")


# ---- who is who ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Identity:
    user: str
    role: str                   # STUDENT or INSTRUCTOR
    remember: bool              # lti:<sub> to be added to the roster


def wanted_role(roles: list) -> str:
    if any(r in INSTRUCTOR_ROLES for r in roles):
        return INSTRUCTOR
    if any(r in LEARNER_ROLES for r in roles):
        return STUDENT
    raise Refused("This launch names neither a learner nor an instructor of the course.")


def identify(claims: dict, members: list[Member], roster: Roster) -> Identity:
    """The hub user of a verified launch, or :class:`Refused`: by ``lti:<sub>`` in the
    roster, else by the launch's email (roster or class list) — never two people merged,
    never an instructor the class list does not name."""
    sub, role = str(claims.get("sub") or ""), wanted_role(claims.get(CLAIM + "roles") or [])
    if not sub:
        raise Refused("This launch names no user.")
    by_member = {m.user: m for m in members}
    user, remember = roster.owner(lti_key(sub)), False
    if user is None:
        email = str(claims.get("email") or "").strip()
        found = set()
        if email:
            owner = roster.owner(email_key(email))
            if owner is not None:
                found.add(owner)
            found |= {m.user for m in members if m.email
                      and email_key(m.email) == email_key(email)}
        if len(found) != 1:
            raise Refused(NOT_LISTED)
        user = found.pop()
        others = [k for k in roster.students.get(user, {}).get("keys", [])
                  if k.startswith(LTI_KEY)]
        if others:          # that person arrived from the LMS as someone else before
            raise Refused(NOT_LISTED)
        remember = user in roster.students or by_member.get(user, Member(user, "")).role \
            == STUDENT
    member = by_member.get(user)
    if member is None:
        raise Refused(NOT_LISTED)
    if member.role != role:
        said = "an instructor" if role == INSTRUCTOR else "a student"
        raise Refused(f"The LMS says you are {said} here, but this course's class list does "
                      "not: ask your instructor.")
    if claims.get(CLAIM + "message_type") == DEEP_LINKING and role != INSTRUCTOR:
        raise Refused("Only the course's instructors add its assignments to the LMS.")
    return Identity(user, role, remember and role == STUDENT)


def remember_identity(roster: Roster, identity: Identity, claims: dict) -> None:
    """Add the launch's LTI identity (and name, e-mail) to the student's roster entry."""
    roster.remember(identity.user, "lti", str(claims.get("name") or ""),
                    [lti_key(str(claims["sub"]))], str(claims.get("email") or ""))


def identified(course: Course, claims: dict, members: list[Member]) -> Identity:
    """:func:`identify`, with the roster read and (when the identity is new) written back
    under the roster's lock: the grading service may be adding the LMS's class list to it
    at the same moment."""
    with Roster.updating(course) as roster:
        identity = identify(claims, members, roster)
        if identity.remember:
            remember_identity(roster, identity, claims)
    return identity


# ---- assignments, for deep linking ----------------------------------------------------

def released(course: Course) -> set[str]:
    """The names of the course's released assignments (``release/``)."""
    if not course.release.is_dir():
        return set()
    return {folder.name for folder in course.release.iterdir() if folder.is_dir()}


def assignment_points(course: Course, assignment: str) -> float:
    """The points of an assignment: nbgrader's ``points`` of its released notebooks' cells
    (the source's where it is not released yet); 1 where it has none."""
    folder = course.release / assignment
    notebooks = sorted(folder.glob("*.ipynb")) if folder.is_dir() else []
    names = course.notebook_names(assignment)
    if names:
        notebooks = [folder / f"{name}.ipynb" for name in names]
    else:
        notebooks = course.source_notebooks(assignment)
    total = 0.0
    for path in notebooks:
        try:
            cells = json.loads(path.read_text(encoding="utf-8")).get("cells", [])
        except (OSError, ValueError):
            continue
        total += sum(float(c.get("metadata", {}).get("nbgrader", {}).get("points", 0) or 0)
                     for c in cells)
    return total or 1.0


def content_item(hub_url: str, assignment: str, points: float) -> dict:
    """One deep-linked assignment: a resource link that opens it, with its gradebook
    column."""
    return {"type": "ltiResourceLink", "title": assignment,
            "url": f"{hub_url}/hub/lti13/launch?assignment={quote(assignment)}",
            "custom": {"assignment": assignment},
            "lineItem": {"scoreMaximum": points, "label": assignment,
                         "resourceId": assignment, "tag": assignment}}


def deep_linking_response(settings: dict, items: list[dict], *, issuer: str, client_id: str,
                          deployment_id: str, private_pem: str) -> str:
    """The signed ``LtiDeepLinkingResponse`` JWT [LTI DL 2.0; Security 5.2]."""
    now = int(time.time())
    claims = {"iss": client_id, "aud": issuer, "iat": now, "exp": now + 300,
              "nonce": secrets.token_urlsafe(16),
              CLAIM + "message_type": "LtiDeepLinkingResponse",
              CLAIM + "version": "1.3.0", CLAIM + "deployment_id": deployment_id,
              CLAIM_DL_CONTENT_ITEMS: items}
    if settings.get("data") is not None:
        claims[CLAIM_DL_DATA] = settings["data"]
    return jwt.encode(claims, private_pem, algorithm="RS256",
                      headers={"kid": public_jwk(private_pem)["kid"]})


def assignment_of(claims: dict) -> str:
    """The assignment a resource link opens: its custom parameter, else its target URL's."""
    custom = claims.get(CLAIM + "custom") or {}
    if isinstance(custom, dict) and isinstance(custom.get("assignment"), str):
        return custom["assignment"]
    query = parse_qs(urlsplit(str(claims.get(CLAIM + "target_link_uri") or "")).query)
    return query.get("assignment", [""])[0]


# ---- handlers -------------------------------------------------------------------------

def _page(title: str, body: str) -> str:
    return (f"<!DOCTYPE html><html><head><meta charset='utf-8'><title>{html.escape(title)}"
            f"</title></head><body><h1>{html.escape(title)}</h1>{body}</body></html>")


class LoginInitHandler(LTI13LoginInitHandler):
    """The library's login initiation; the state cookies cross sites over https."""

    def _set_oauth_cookie(self, key: str, value) -> None:
        # The platform posts the id_token back from its own site: a cookie SameSite=Lax
        # (the browsers' default) would not come with it. None needs Secure, so https only.
        secure = self.authenticator.get_uri_scheme(self.request) == "https"
        extra = {"samesite": "None", "secure": True} if secure else {}
        self._set_cookie(key, value, expires_days=1, httponly=True, encrypted=True, **extra)


class CallbackHandler(LTI13CallbackHandler):
    """The library's checks, then this module's; then who is who, and where they go."""

    async def post(self) -> None:
        auth = self.authenticator
        try:
            claims = self.decode_and_validate_launch_request()
            check_claims(claims, auth.lti_client_id, auth.deployment_id)
        except InvalidAudienceError as error:
            raise web.HTTPError(401, str(error)) from None
        except ValidationError as error:
            raise web.HTTPError(400, str(error)) from None
        if not auth.nonces.use(claims["nonce"], float(claims.get("exp", 0))):
            raise web.HTTPError(400, "this launch's nonce was used before")
        user = await self.login_user(VerifiedLaunch(claims))
        if user is None:
            raise web.HTTPError(403, NOT_LISTED)
        if claims[CLAIM + "message_type"] == DEEP_LINKING:
            ticket, now = secrets.token_urlsafe(24), time.time()
            for old in [t for t, (_, _, ends) in auth.deep_link_requests.items() if ends < now]:
                del auth.deep_link_requests[old]
            auth.deep_link_requests[ticket] = (user.name, claims.get(CLAIM_DL_SETTINGS) or {},
                                               time.time() + 3600)
            self.redirect(url_path_join(self.hub.base_url, "lti13", "deep_link")
                          + f"?request={ticket}")
            return
        self.redirect(await auth.landing(self.hub.base_url, self.base_url, user.name,
                                         assignment_of(claims)))


class LaunchTargetHandler(BaseHandler):
    """``/hub/lti13/launch?assignment=…``: the URL deep-linked items name; a user logged in
    goes to their JupyterLab, at the assignment."""

    @web.authenticated
    async def get(self) -> None:
        self.redirect(await self.authenticator.landing(self.hub.base_url, self.base_url,
                                                       self.current_user.name,
                                                       self.get_argument("assignment", "")))


class DeepLinkHandler(BaseHandler):
    """The instructor's choice of assignments, sent back to the platform signed."""

    def _request(self) -> dict:
        found = self.authenticator.deep_link_requests.get(self.get_argument("request", ""))
        if found is None or found[2] < time.time() or found[0] != self.current_user.name:
            raise web.HTTPError(403, "no deep linking request of yours is waiting")
        return found[1]

    @web.authenticated
    def get(self) -> None:
        self._request()
        assignments = self.authenticator.course.assignments()
        rows = "".join(
            f"<li><label><input type='checkbox' name='assignment' value='{html.escape(a)}' "
            f"checked> {html.escape(a)}</label></li>" for a in assignments)
        self.finish(_page("Add the course's assignments to the LMS", (
            f"<form method='post'>{self.xsrf_form_html()}<ul>{rows}</ul>"
            "<button type='submit' id='deep-link-submit'>Add to the course</button></form>")
            if assignments else "<p>The course has no assignments yet.</p>"))

    @web.authenticated
    def post(self) -> None:
        settings = self._request()
        auth = self.authenticator
        known = set(auth.course.assignments())
        chosen = [a for a in self.get_arguments("assignment") if a in known]
        origin = f"{auth.get_uri_scheme(self.request)}://{self.request.host}"
        items = [content_item(origin, a, assignment_points(auth.course, a)) for a in chosen]
        token = deep_linking_response(
            settings, items, issuer=auth.issuer, client_id=auth.lti_client_id,
            deployment_id=auth.deployment_id,
            private_pem=Path(auth.private_key).read_text())
        del auth.deep_link_requests[self.get_argument("request")]
        url = str(settings.get("deep_link_return_url") or "")
        if not url.startswith(("https://", "http://")):
            raise web.HTTPError(400, "the deep linking request named no return URL")
        self.finish(
            "<!DOCTYPE html><html><body onload='document.forms[0].submit()'>"
            f"<form method='post' action='{html.escape(url)}'>"
            f"<input type='hidden' name='JWT' value='{html.escape(token)}'>"
            "<noscript><button type='submit'>Continue</button></noscript></form></body></html>")


# ---- the authenticator -------------------------------------------------------------------

class CourseAuthenticator(LTI13Authenticator, PAMAuthenticator):
    """The local login (PAM) as before, and LTI 1.3 launches (the library's flow, with the
    checks and the class list of this module)."""

    login_service = ""                       # the login page keeps its user/password form
    login_handler = LoginHandler
    course_root = Unicode(config=True, help="The course folder (its roster, assignments).")
    class_list = Unicode(config=True, help="The class list (hub/settings.py read_class).")
    deployment_id = Unicode(config=True, help="The registered deployment of the tool.")
    private_key = Unicode(config=True, help="The tool's private key (PEM file).")
    students_python = Unicode(config=True, help="The Python of the students' JupyterLab "
                              "(runs nbgrader's fetch as a student who launches an assignment).")
    student_environment = Dict(config=True, help="The environment of the students' servers "
                               "(Spawner.environment): their Jupyter configuration and path.")
    nonce_file = Unicode(config=True, help="Where the launches' nonces are kept until they "
                         "expire (a JSON file in the hub's state folder).")

    def __init__(self, **kwargs) -> None:
        super().__init__(**kwargs)
        self.nonces = Nonces(Path(self.nonce_file))
        self.deep_link_requests: dict[str, tuple[str, dict, float]] = {}

    @property
    def lti_client_id(self) -> str:
        return next(iter(self.client_id))

    @property
    def course(self) -> Course:
        return Course.at(self.course_root)

    def login_url(self, base_url: str) -> str:
        return Authenticator.login_url(self, base_url)

    def get_handlers(self, app) -> list:
        return [*Authenticator.get_handlers(self, app),
                (self.login_url_lti(""), LoginInitHandler),
                (self.callback_url(""), CallbackHandler),
                ("/lti13/launch", LaunchTargetHandler),
                ("/lti13/deep_link", DeepLinkHandler)]

    @staticmethod
    def login_url_lti(base_url: str) -> str:
        return url_path_join(base_url, "lti13", "oauth_login")

    async def authenticate(self, handler, data=None):
        if not isinstance(data, VerifiedLaunch):
            return await PAMAuthenticator.authenticate(self, handler, data)
        # In a thread: the roster's lock may be held a moment by the service or `collect`.
        identity = await asyncio.to_thread(identified, self.course, data,
                                           read_class(Path(self.class_list)))
        self.log.info("LTI launch: platform user %s is %s (%s)", data.get("sub"),
                      identity.user, identity.role)
        return {"name": identity.user}

    async def landing(self, hub_base: str, base_url: str, user: str, assignment: str) -> str:
        """Where a launch goes: the user's JupyterLab (started if it is not running), at the
        assignment's folder — for a student who has not fetched it yet, fetched for them
        first (:meth:`fetch_for`), so that the LMS's item opens the assignment itself."""
        lab = url_path_join(base_url, "user", user, "lab")
        try:
            home = Path(pwd.getpwnam(user).pw_dir)
        except KeyError:                   # a spawner without local homes: JupyterLab's start
            home = None
        if home is not None and assignment and "/" not in assignment \
                and not assignment.startswith("."):
            folder = home / assignment
            if not folder.is_dir() and assignment in released(self.course) \
                    and any(m.user == user and m.role == STUDENT
                            for m in read_class(Path(self.class_list))):
                await asyncio.to_thread(self.fetch_for, user, assignment)
            if folder.is_dir():
                lab = url_path_join(lab, "tree", quote(assignment))
        return url_path_join(hub_base, "spawn", user) + "?next=" + quote(lab, safe="")

    def fetch_for(self, user: str, assignment: str) -> None:
        """nbgrader's fetch of a released assignment into the student's home, run as the
        student (as the Assignment List's Fetch runs it: their files, their permissions),
        with the students' Python and Jupyter configuration. Nothing when the hub cannot act
        as its users (not root) or the assignment is not released: the launch then opens
        JupyterLab, where the Assignment List says what there is."""
        if os.geteuid() != 0 or not self.students_python:
            return
        entry = pwd.getpwnam(user)
        environment = {"HOME": entry.pw_dir, "USER": user, "LOGNAME": user,
                       "PATH": "/usr/local/bin:/usr/bin:/bin", **self.student_environment}
        command = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}",
                   "--init-groups", "--", self.students_python, "-m", "nbgrader",
                   "fetch_assignment", assignment]
        try:
            fetched = subprocess.run(command, cwd=entry.pw_dir, env=environment, check=False,
                                     capture_output=True, text=True, timeout=FETCH_SECONDS)
        except (OSError, subprocess.TimeoutExpired) as error:
            self.log.warning("LTI launch: %s's %s not fetched: %s", user, assignment, error)
            return
        if fetched.returncode != 0:
            self.log.info("LTI launch: %s's %s not fetched: %s", user, assignment,
                          fetched.stderr.strip().splitlines()[-1:])
