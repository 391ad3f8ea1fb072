"""The platform's services, as the tool calls them: line items and scores (AGS 2.0) and
the context's members (NRPS 2.0), through pylti1p3next's service classes, which sign the
tool's client assertion, ask for an access token (OAuth 2 client credentials) and follow
``Link: rel="next"`` pages. Access tokens are kept until a minute before they expire.

Every failure — the platform unreachable, a refusal, an answer that is not what the
specification says — is a :class:`PlatformError` naming the call: the caller keeps the
grade and tries again later.
"""

from __future__ import annotations

import time
from collections.abc import Iterator

import requests
from pylti1p3.assignments_grades import AssignmentsGradesService
from pylti1p3.exception import LtiException
from pylti1p3.lineitem import LineItem
from pylti1p3.names_roles import NamesRolesProvisioningService
from pylti1p3.registration import Registration
from pylti1p3.service_connector import ServiceConnector

from .keys import public_jwk, public_pem
from .settings import LtiSettings

SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_RESULT_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_MEMBERSHIPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
AGS_SCOPES = [SCOPE_LINEITEM, SCOPE_RESULT_READONLY, SCOPE_SCORE]
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
TIMEOUT = (10, 30)       # seconds to connect, to read: a platform that hangs is a failure


class PlatformError(RuntimeError):
    """A call to the platform failed; the message names it (and the HTTP status)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message)
        self.status = status          # the platform's HTTP status, if it answered


class _Registration(Registration):
    """pylti1p3's registration, with the ``kid`` of :func:`.keys.public_jwk`."""

    def __init__(self, kid: str) -> None:
        super().__init__()
        self._kid = kid

    def get_kid(self) -> str:
        return self._kid


class _Session(requests.Session):
    def request(self, *args, **kwargs):
        kwargs.setdefault("timeout", TIMEOUT)
        return super().request(*args, **kwargs)


class _Connector(ServiceConnector):
    """pylti1p3's connector with access tokens kept in memory while they are valid."""

    def __init__(self, registration: Registration) -> None:
        session = _Session()
        session.headers["User-Agent"] = "attention-course-autograder (pylti1p3next)"
        super().__init__(registration, session)
        self._tokens: dict[str, tuple[str, float]] = {}

    def _get_cached_access_token(self, scope_key: str) -> str | None:
        token, until = self._tokens.get(scope_key, ("", 0.0))
        return token if time.monotonic() < until else None

    def _cache_access_token(self, scope_key: str, access_token: str, expires_in: float):
        self._tokens[scope_key] = (access_token, time.monotonic() + float(expires_in) - 60)


class Platform:
    """The services of the platform in ``settings``, called as the tool whose private key
    is ``private_pem``."""

    def __init__(self, settings: LtiSettings, private_pem: str) -> None:
        registration = _Registration(public_jwk(private_pem)["kid"])
        registration.set_issuer(settings.issuer).set_client_id(settings.client_id) \
            .set_auth_token_url(settings.token_url).set_key_set_url(settings.jwks_url) \
            .set_auth_login_url(settings.auth_login_url) \
            .set_tool_private_key(private_pem).set_tool_public_key(public_pem(private_pem))
        connector = _Connector(registration)
        self._grades = AssignmentsGradesService(
            connector, {"scope": AGS_SCOPES, "lineitems": settings.lineitems_url})
        self._members = NamesRolesProvisioningService(
            connector, {"context_memberships_url": settings.memberships_url})

    def line_item(self, tag: str, label: str, maximum: float) -> str:
        """The id (URL) of the line item tagged ``tag``, made if the platform has none."""
        wanted = LineItem().set_tag(tag).set_resource_id(tag).set_label(label) \
            .set_score_maximum(maximum)
        item = self._call(f"line item {tag}",
                          lambda: self._grades.find_or_create_lineitem(wanted, find_by="tag"))
        if not item.get_id():
            raise PlatformError(f"line item {tag}: the platform gave it no id")
        return item.get_id()

    def post_score(self, line_item: str, score: dict) -> None:
        """Post one score (AGS's score object, as a dict) to ``line_item``."""
        from pylti1p3.grade import Grade

        grade = Grade().set_user_id(score["userId"]).set_timestamp(score["timestamp"]) \
            .set_activity_progress(score["activityProgress"]) \
            .set_grading_progress(score["gradingProgress"])
        if "scoreGiven" in score:
            grade.set_score_given(score["scoreGiven"]).set_score_maximum(score["scoreMaximum"])
        if score.get("comment"):
            grade.set_comment(score["comment"])
        self._call(f"score for {score['userId']}",
                   lambda: self._grades.put_grade(grade, LineItem({"id": line_item})))

    def results(self, line_item: str) -> dict[str, dict]:
        """``{user id: result}`` of ``line_item``, as the platform has them."""
        found = self._call("results", lambda: list(self._grades.get_grades(
            LineItem({"id": line_item}))))
        return {result["userId"]: result for result in found if "userId" in result}

    def members(self) -> Iterator[dict]:
        """Every member of the course's context, every page."""
        yield from self._call("members", self._members.get_members)

    @staticmethod
    def _call(what: str, call):
        try:
            return call()
        except (LtiException, requests.RequestException, KeyError, ValueError,
                TypeError) as error:
            response = getattr(error, "response", None)
            raise PlatformError(f"{what}: {error}",
                                getattr(response, "status_code", None)) from None
