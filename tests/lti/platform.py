"""A test LTI 1.3 platform that plays Canvas's part on loopback, for the tool's tests.

Written from the specifications alone (not from the tool's code), it is the referee of every
request the tool makes: a request that breaks a rule gets the error a real platform gives
*and* a line in ``Platform.violations`` naming the rule (with the specification section it
comes from) and the request.

Specifications (section titles are the reliable reference; numbers as in the published
HTML of each document):

* [SEC] IMS Security Framework 1.0 (https://www.imsglobal.org/spec/security/v1p0/)
  - 4.1 "Using OAuth 2.0 Client Credentials Grant", 4.1.1 "Using JSON Web Tokens with OAuth
    2.0 Client Credentials Grant" (client_assertion: iss = sub = client_id, aud = the token
    endpoint, iat, exp, jti unique; RFC 7523 section 3 and RFC 6749 section 4.4 / 5.2 for
    the form and the errors; RFC 6750 section 3.1 for the Bearer errors 401/403);
  - 5.1.1 "OpenID Connect Launch Flow Overview": 5.1.1.1 third-party initiated login,
    5.1.1.2 authentication request (scope=openid, response_type=id_token,
    response_mode=form_post, prompt=none, client_id, redirect_uri, login_hint,
    lti_message_hint, state, nonce), 5.1.1.3 authentication response (form post of
    id_token and state); 5.1.2 "ID Token"; 5.2 "Tool-Originating Messages" (the deep
    linking response JWT: iss = client_id, aud = platform issuer, nonce);
  - 6 "Key Management": RS256 keys, published as a JWK Set with kid.
* [CORE] IMS LTI 1.3 Core (https://www.imsglobal.org/spec/lti/v1p3/)
  - 5.3 "Required message claims" (message_type, version 1.3.0, deployment_id,
    target_link_uri, resource_link, sub, roles); 5.4 "Optional message claims" (context,
    custom, ...); Appendix A.2 "LIS vocabulary for context roles".
* [AGS] IMS LTI Assignment and Grade Services 2.0 (https://www.imsglobal.org/spec/lti-ags/v2p0/)
  - 3.1 the endpoint claim and scopes; 3.2 "Line item service" (media types lineitem /
    lineitemcontainer, filters resource_link_id, resource_id, tag, limit; paging with Link
    rel="next"; label and scoreMaximum > 0 required); 3.3 "Result service" (resultcontainer,
    user_id filter); 3.4 "Score publish service" (score media type; userId, timestamp with
    sub-second precision, activityProgress, gradingProgress, scoreGiven/scoreMaximum,
    comment; the platform must not update a result with a score older than the last one).
* [NRPS] IMS LTI Names and Role Provisioning Services 2.0
  (https://www.imsglobal.org/spec/lti-nrps/v2p0/): the membership container media type, the
  role and limit query parameters, paging with Link rel="next", the member fields; the
  service claim (context_memberships_url, service_versions ["2.0"]).
* [DL] IMS LTI Deep Linking 2.0 (https://www.imsglobal.org/spec/lti-dl/v2p0/): the
  deep_linking_settings claim and the LtiDeepLinkingResponse (content_items, data echoed).

Canvas's conventions where the specifications leave a choice: the paths, the client id
(a developer key id), the deployment id, the 200 + ``resultUrl`` reply to a score, and the
``Link`` header with rel="current", "next", "first" and "last".
"""

from __future__ import annotations

import html
import json
import re
import secrets
import threading
import time
from datetime import UTC, datetime, timedelta
from fractions import Fraction
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

# Context roles [CORE Appendix A.2]
LEARNER = "http://purl.imsglobal.org/vocab/lis/v2/membership#Learner"
INSTRUCTOR = "http://purl.imsglobal.org/vocab/lis/v2/membership#Instructor"
TEACHING_ASSISTANT = "http://purl.imsglobal.org/vocab/lis/v2/membership/Instructor#TeachingAssistant"

# Scopes [AGS 3.1, NRPS]
SCOPE_LINEITEM = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem"
SCOPE_LINEITEM_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/lineitem.readonly"
SCOPE_RESULT_READONLY = "https://purl.imsglobal.org/spec/lti-ags/scope/result.readonly"
SCOPE_SCORE = "https://purl.imsglobal.org/spec/lti-ags/scope/score"
SCOPE_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/scope/contextmembership.readonly"
AGS_SCOPES = (SCOPE_LINEITEM, SCOPE_LINEITEM_READONLY, SCOPE_RESULT_READONLY, SCOPE_SCORE)
KNOWN_SCOPES = frozenset((*AGS_SCOPES, SCOPE_NRPS))

# Media types [AGS 3.2-3.4, NRPS]
MEDIA_LINEITEM = "application/vnd.ims.lis.v2.lineitem+json"
MEDIA_LINEITEM_CONTAINER = "application/vnd.ims.lis.v2.lineitemcontainer+json"
MEDIA_SCORE = "application/vnd.ims.lis.v1.score+json"
MEDIA_RESULT = "application/vnd.ims.lis.v2.result+json"
MEDIA_RESULT_CONTAINER = "application/vnd.ims.lis.v2.resultcontainer+json"
MEDIA_MEMBERSHIP_CONTAINER = "application/vnd.ims.lti-nrps.v2.membershipcontainer+json"
MEDIA_FORM = "application/x-www-form-urlencoded"

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"
ACTIVITY_PROGRESS = frozenset({"Initialized", "Started", "InProgress", "Submitted", "Completed"})
GRADING_PROGRESS = frozenset({"FullyGraded", "Pending", "PendingManual", "Failed", "NotReady"})

# Claims [CORE 5.3, 5.4; AGS 3.1; NRPS; DL]
CLAIM = "https://purl.imsglobal.org/spec/lti/claim/"
CLAIM_AGS = "https://purl.imsglobal.org/spec/lti-ags/claim/endpoint"
CLAIM_NRPS = "https://purl.imsglobal.org/spec/lti-nrps/claim/namesroleservice"
CLAIM_DL_SETTINGS = "https://purl.imsglobal.org/spec/lti-dl/claim/deep_linking_settings"
CLAIM_DL_CONTENT_ITEMS = "https://purl.imsglobal.org/spec/lti-dl/claim/content_items"
CLAIM_DL_DATA = "https://purl.imsglobal.org/spec/lti-dl/claim/data"

CONTEXT_ID = "4dde05e8ca1973bcca9bffc13e1548820eee93a3"
DEFAULT_RESOURCE_LINK_ID = "a4c2c6c2-7d3c-4e5e-9b57-3b0a7f8e1c01"
CLOCK_LEEWAY = 60  # seconds [SEC 4.1.1: iat not in the future, allowing for clock skew]
MAX_ASSERTION_LIFETIME = 3600

_TIMESTAMP = re.compile(
    r"([0-9]{4})-([0-9]{2})-([0-9]{2})[Tt]([0-9]{2}):([0-9]{2}):([0-9]{2})(?:\.([0-9]+))?"
    r"(Z|z|[+-][0-9]{2}:?[0-9]{2})")


def parse_timestamp(value: Any) -> Fraction | None:
    """Seconds since the epoch, exactly (any sub-second precision), of an ISO 8601 date and
    time *with* its offset; None if ``value`` is not one."""
    if not isinstance(value, str):
        return None
    match = _TIMESTAMP.fullmatch(value)
    if not match:
        return None
    year, month, day, hour, minute, second, fraction, offset = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour), int(minute),
                          int(second), tzinfo=UTC)
    except ValueError:
        return None
    if offset not in ("Z", "z"):
        sign = 1 if offset[0] == "+" else -1
        digits = offset[1:].replace(":", "")
        hours, minutes = int(digits[:2]), int(digits[2:])
        if hours > 23 or minutes > 59:
            return None
        try:
            moment -= sign * timedelta(hours=hours, minutes=minutes)
        except OverflowError:
            return None
    seconds = Fraction(int(moment.timestamp()))
    if fraction:
        seconds += Fraction(int(fraction), 10 ** len(fraction))
    return seconds


def _is_iso_datetime(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        datetime.fromisoformat(value)
    except ValueError:
        return False
    return "T" in value or "t" in value


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _media_type(header: str | None) -> str:
    return (header or "").split(";", 1)[0].strip().lower()


def _accepts(header: str | None, media_type: str) -> bool:
    return any(_media_type(part) == media_type for part in (header or "").split(","))


_KEY_LOCK = threading.Lock()
_KEYS: list[rsa.RSAPrivateKey] = []


def _platform_key() -> rsa.RSAPrivateKey:
    with _KEY_LOCK:
        if not _KEYS:
            _KEYS.append(rsa.generate_private_key(public_exponent=65537, key_size=2048))
        return _KEYS[0]


class _Refusal(Exception):
    """A request refused: the status, the body and whether it is a violation of a rule."""

    def __init__(self, status: int, rule: str, detail: str, *, error: str = "",
                 violation: bool = True, headers: dict[str, str] | None = None) -> None:
        super().__init__(f"{rule}: {detail}")
        self.status, self.rule, self.detail = status, rule, detail
        self.error, self.violation, self.headers = error, violation, headers or {}


class Platform:
    """The platform: a ``ThreadingHTTPServer`` on 127.0.0.1 (port chosen by the system),
    served from a daemon thread between ``__enter__`` and ``__exit__``.

    Everything the tool did is kept for the tests to read: ``requests`` (method and path
    with its query string, as received, injected failures included), ``violations``,
    ``line_items``, ``scores``, ``result()``, ``tokens``, ``launches``, ``deep_links``.
    """

    def __init__(self, tool_public_jwks: dict | None = None) -> None:
        self._lock = threading.RLock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _Handler)
        self._server.daemon_threads = True
        self._server.platform = self  # type: ignore[attr-defined]
        self._thread: threading.Thread | None = None
        port = self._server.server_address[1]

        self.issuer = f"http://127.0.0.1:{port}"
        self.client_id = "10000000000042"
        self.deployment_id = "7:8865aa05b4b79b64a91a86042e43af5ea8ae79eb"
        self.token_url = self.issuer + "/login/oauth2/token"
        self.jwks_url = self.issuer + "/api/lti/security/jwks"
        self.auth_url = self.issuer + "/api/lti/authorize_redirect"
        self.lineitems_url = self.issuer + "/api/lti/courses/101/line_items"
        self.memberships_url = self.issuer + "/api/lti/courses/101/names_and_roles"
        self.deep_link_return_url = self.issuer + "/deep_linking_return"
        self.context = {"id": CONTEXT_ID, "label": "ATT-NLP", "title": "Attention in NLP",
                        "type": ["http://purl.imsglobal.org/vocab/lis/v2/course#CourseOffering"]}

        # The platform's signing key [SEC 6]: one RSA key per process (making a 2048-bit key
        # takes 0.05-0.3 s), under a kid of each platform's own.
        self._private_key = _platform_key()
        self.kid = "platform-" + secrets.token_hex(8)
        public_jwk = RSAAlgorithm.to_jwk(self._private_key.public_key(), as_dict=True)
        public_jwk.update(kid=self.kid, alg="RS256", use="sig")
        self.public_jwks = {"keys": [public_jwk]}

        # The registered tool
        self.tool_public_jwks: dict | None = None
        self.redirect_uris: list[str] = []
        self.login_url = ""

        # State
        self.members: list[dict] = []
        self.resource_links: set[str] = {DEFAULT_RESOURCE_LINK_ID}
        self.line_items: dict[str, dict] = {}
        self.scores: dict[str, list[dict]] = {}
        self._results: dict[tuple[str, str], dict] = {}
        self._last_timestamp: dict[tuple[str, str], Fraction] = {}
        self._next_line_item = 1
        self.violations: list[str] = []
        self.requests: list[tuple[str, str]] = []
        self.page_size = 2
        self.token_lifetime = 3600  # the expires_in of the access tokens given
        self.tokens: dict[str, dict] = {}  # access token -> {"scopes": set, "expires": float}
        self._used_jtis: set[str] = set()
        self._failures: list[list] = []  # [remaining count, status, path_contains]

        # Launches (OIDC) and deep linking
        self._logins: dict[str, dict] = {}  # lti_message_hint -> the login initiated
        self._nonces_seen: set[str] = set()
        self._deep_linking_requests: dict[str, dict] = {}  # data -> the request's claims
        self.launches: list[dict] = []  # every authentication request answered with a form
        self.deep_links: list[dict] = []  # every content item the tool returned

        if tool_public_jwks is not None:
            self.register_tool(tool_public_jwks)

    # ---- lifecycle -------------------------------------------------------------------

    def __enter__(self) -> Platform:
        # A short poll: shutdown() waits for the loop to look (0.5 s by default).
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,),
                                        name="lti-platform", daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    # ---- configuration ---------------------------------------------------------------

    def register_tool(self, public_jwks: dict, redirect_uris: list[str] = (),
                      login_url: str = "") -> None:
        """Register the tool: its public keys (a JWK Set, ``{"keys": [...]}``, or a single
        JWK), the redirect URIs its launches may name, and its OIDC login URL."""
        if "keys" not in public_jwks:
            public_jwks = {"keys": [public_jwks]}
        with self._lock:
            self.tool_public_jwks = public_jwks
            self.redirect_uris = list(redirect_uris)
            self.login_url = login_url

    def add_member(self, user_id: str, name: str, email: str = "",
                   roles: list[str] = (LEARNER,), sourcedid: str = "",
                   status: str = "Active") -> None:
        """Enrol a member in the context (course 101). An empty email or sourcedid is left
        out of the member, as a platform that does not share it does [NRPS]."""
        given, _, family = name.partition(" ")
        member = {"status": status, "name": name, "given_name": given,
                  "family_name": family, "user_id": user_id, "roles": list(roles)}
        if email:
            member["email"] = email
        if sourcedid:
            member["lis_person_sourcedid"] = sourcedid
        with self._lock:
            self.members = [m for m in self.members if m["user_id"] != user_id] + [member]

    def add_resource_link(self, resource_link_id: str) -> None:
        with self._lock:
            self.resource_links.add(resource_link_id)

    def fail_next(self, count: int, status: int = 503, path_contains: str = "") -> None:
        """The next ``count`` requests whose path contains ``path_contains`` get ``status``
        (no violation recorded): the tool's retries are tested with it."""
        with self._lock:
            self._failures.append([count, status, path_contains])

    def expire_tokens(self) -> None:
        """Every access token given so far expires now."""
        with self._lock:
            for token in self.tokens.values():
                token["expires"] = 0.0

    def delete_line_item(self, lineitem_id: str) -> None:
        """Delete a line item and its results, as an instructor deleting its column in the
        LMS's gradebook does."""
        with self._lock:
            self.line_items.pop(lineitem_id, None)
            for key in [k for k in self._results if k[0] == lineitem_id]:
                del self._results[key]

    def result(self, lineitem_id: str, user_id: str) -> dict | None:
        """The current result of ``user_id`` on the line item, as GET .../results gives it."""
        with self._lock:
            found = self._results.get((lineitem_id, user_id))
            return dict(found) if found is not None else None

    def member(self, user_id: str) -> dict | None:
        with self._lock:
            return next((dict(m) for m in self.members if m["user_id"] == user_id), None)

    # ---- launches (OIDC) -------------------------------------------------------------

    def initiate_login(self, login_url: str, target_link_uri: str, user_id: str,
                       lti_message_hint: str = "", *, roles: list[str] | None = None,
                       message_type: str = "LtiResourceLinkRequest",
                       resource_link_id: str = DEFAULT_RESOURCE_LINK_ID,
                       custom: dict | None = None) -> str:
        """The URL the browser is sent to first: the tool's login initiation [SEC 5.1.1.1].
        The authentication request that follows must echo ``user_id`` as login_hint and
        ``lti_message_hint`` (generated if empty). ``roles`` default to the member's."""
        hint = lti_message_hint or "launch-" + secrets.token_urlsafe(12)
        if roles is None:
            found = self.member(user_id)
            roles = found["roles"] if found else [LEARNER]
        with self._lock:
            self._logins[hint] = {"user_id": user_id, "target_link_uri": target_link_uri,
                                  "roles": list(roles), "message_type": message_type,
                                  "resource_link_id": resource_link_id, "custom": custom}
        query = {"iss": self.issuer, "login_hint": user_id, "target_link_uri": target_link_uri,
                 "lti_message_hint": hint, "client_id": self.client_id,
                 "lti_deployment_id": self.deployment_id}
        return login_url + ("&" if "?" in login_url else "?") + urlencode(query)

    def id_token(self, user_id: str, roles: list[str] = (LEARNER,),
                 message_type: str = "LtiResourceLinkRequest",
                 resource_link_id: str = DEFAULT_RESOURCE_LINK_ID,
                 target_link_uri: str = "", nonce: str = "", custom: dict | None = None,
                 deep_linking: bool = False, key: Any = None, expires_in: int = 300,
                 issued_at: float | None = None, audience: Any = None) -> str:
        """A signed LTI 1.3 id_token [SEC 5.1.2; CORE 5.3, 5.4; AGS 3.1; NRPS; DL].

        ``key`` (a private RSA key or its PEM) signs it instead of the platform's key, under
        the platform's kid: a forgery. ``issued_at``, ``expires_in`` and ``audience`` make
        stale or misdirected tokens; the same ``nonce`` twice makes a replay."""
        now = time.time() if issued_at is None else issued_at
        deep_linking = deep_linking or message_type == "LtiDeepLinkingRequest"
        if deep_linking:
            message_type = "LtiDeepLinkingRequest"
        target_link_uri = target_link_uri or (self.redirect_uris[0] if self.redirect_uris
                                              else "https://tool.invalid/launch")
        found = self.member(user_id) or {}
        name = found.get("name", "Test User " + user_id)
        given, _, family = name.partition(" ")
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "aud": self.client_id if audience is None else audience,
            "azp": self.client_id,
            "sub": user_id,
            "iat": int(now),
            "exp": int(now + expires_in),
            "nonce": nonce or secrets.token_urlsafe(16),
            "name": name,
            "given_name": found.get("given_name", given),
            "family_name": found.get("family_name", family),
            "email": found.get("email", f"{user_id}@example.invalid"),
            CLAIM + "message_type": message_type,
            CLAIM + "version": "1.3.0",
            CLAIM + "deployment_id": self.deployment_id,
            CLAIM + "target_link_uri": target_link_uri,
            CLAIM + "roles": list(roles),
            CLAIM + "context": dict(self.context),
            CLAIM + "tool_platform": {"guid": "canvas-test-platform", "name": "Test Canvas",
                                      "product_family_code": "canvas"},
            CLAIM + "launch_presentation": {"document_target": "iframe", "locale": "en"},
            CLAIM_AGS: {"scope": list(AGS_SCOPES), "lineitems": self.lineitems_url},
            CLAIM_NRPS: {"context_memberships_url": self.memberships_url,
                         "service_versions": ["2.0"]},
        }
        if found.get("lis_person_sourcedid"):
            claims[CLAIM + "lis"] = {"person_sourcedid": found["lis_person_sourcedid"]}
        if custom is not None:
            claims[CLAIM + "custom"] = dict(custom)
        if deep_linking:
            data = "dl-" + secrets.token_urlsafe(12)
            claims[CLAIM_DL_SETTINGS] = {
                "deep_link_return_url": self.deep_link_return_url,
                "accept_types": ["ltiResourceLink"],
                "accept_presentation_document_targets": ["iframe", "window"],
                "accept_multiple": True,
                "data": data,
            }
            with self._lock:
                self._deep_linking_requests[data] = claims
        else:
            claims[CLAIM + "resource_link"] = {"id": resource_link_id,
                                               "title": "Assignment " + resource_link_id[:8]}
            self.add_resource_link(resource_link_id)
        signing_key = self._private_key if key is None else key
        return jwt.encode(claims, signing_key, algorithm="RS256", headers={"kid": self.kid})

    # ---- request handling (called from the server's threads) --------------------------

    def _record(self, method: str, path: str) -> int | None:
        """Note the request; the status of an injected failure if one applies."""
        with self._lock:
            self.requests.append((method, path))
            for failure in self._failures:
                if failure[0] > 0 and failure[2] in path:
                    failure[0] -= 1
                    return failure[1]
        return None

    def _violation(self, method: str, path: str, refusal: _Refusal) -> None:
        with self._lock:
            self.violations.append(
                f"{refusal.rule}: {refusal.detail} ({method} {path} -> {refusal.status})")

    def _tool_keys(self, kid: str | None) -> list[Any]:
        with self._lock:
            jwks = self.tool_public_jwks
        if not jwks:
            raise _Refusal(401, "[SEC 4.1.1] client authentication", "no tool is registered",
                           error="invalid_client")
        keys = []
        for jwk in jwks.get("keys", []):
            if jwk.get("kty") != "RSA" or (kid is not None and jwk.get("kid") != kid):
                continue
            keys.append(RSAAlgorithm.from_jwk(json.dumps(jwk)))
        if not keys:
            raise _Refusal(401, "[SEC 6] the JWT's kid names a registered tool key",
                           f"no registered RSA key with kid {kid!r}", error="invalid_client")
        return keys

    def _verify_tool_jwt(self, token: str, rule: str) -> dict:
        """The claims of a JWT signed (RS256) with one of the tool's registered keys."""
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError as error:
            raise _Refusal(401, rule, f"not a JWT: {error}", error="invalid_client") from None
        if header.get("alg") != "RS256":
            raise _Refusal(401, "[SEC 6] JWTs are signed with RS256",
                           f"alg is {header.get('alg')!r}", error="invalid_client")
        for key in self._tool_keys(header.get("kid")):
            try:
                return jwt.decode(token, key, algorithms=["RS256"],
                                  options={"verify_signature": True, "verify_exp": False,
                                           "verify_nbf": False, "verify_iat": False,
                                           "verify_aud": False, "verify_iss": False})
            except jwt.InvalidSignatureError:
                continue
            except jwt.PyJWTError as error:
                raise _Refusal(401, rule, f"undecodable JWT: {error}",
                               error="invalid_client") from None
        raise _Refusal(401, rule, "signature does not verify with the registered tool key",
                       error="invalid_client")

    def _check_times(self, claims: dict, rule: str, now: float) -> None:
        iat, exp = claims.get("iat"), claims.get("exp")
        if not _is_number(iat):
            raise _Refusal(401, rule, "iat missing or not a number", error="invalid_client")
        if not _is_number(exp):
            raise _Refusal(401, rule, "exp missing or not a number", error="invalid_client")
        if iat > now + CLOCK_LEEWAY:
            raise _Refusal(401, rule, f"iat is {iat - now:.0f} s in the future",
                           error="invalid_client")
        if exp <= now:
            raise _Refusal(401, rule, f"expired {now - exp:.0f} s ago", error="invalid_client")
        if _is_number(claims.get("nbf")) and claims["nbf"] > now + CLOCK_LEEWAY:
            raise _Refusal(401, rule, "nbf in the future", error="invalid_client")

    def _token(self, form: dict[str, str]) -> dict:
        """[SEC 4.1, 4.1.1; RFC 7523 3; RFC 6749 4.4, 5.1, 5.2]"""
        rule = "[SEC 4.1.1] client_assertion"
        if form.get("grant_type") != "client_credentials":
            raise _Refusal(400, "[SEC 4.1] grant_type=client_credentials",
                           f"grant_type is {form.get('grant_type')!r}",
                           error="unsupported_grant_type")
        if form.get("client_assertion_type") != CLIENT_ASSERTION_TYPE:
            raise _Refusal(400, "[SEC 4.1.1; RFC 7523 2.2] client_assertion_type",
                           f"is {form.get('client_assertion_type')!r}", error="invalid_request")
        assertion = form.get("client_assertion")
        if not assertion:
            raise _Refusal(400, rule, "missing", error="invalid_request")
        claims = self._verify_tool_jwt(assertion, rule)
        now = time.time()
        if claims.get("iss") != self.client_id:
            raise _Refusal(401, rule + " iss = client_id", f"iss is {claims.get('iss')!r}",
                           error="invalid_client")
        if claims.get("sub") != self.client_id:
            raise _Refusal(401, rule + " sub = client_id", f"sub is {claims.get('sub')!r}",
                           error="invalid_client")
        aud = claims.get("aud")
        if not (aud == self.token_url or (isinstance(aud, list) and self.token_url in aud)):
            raise _Refusal(401, rule + " aud = the token endpoint", f"aud is {aud!r}",
                           error="invalid_client")
        self._check_times(claims, rule, now)
        if claims["exp"] - claims["iat"] > MAX_ASSERTION_LIFETIME:
            raise _Refusal(401, rule + " lifetime at most an hour",
                           f"exp - iat = {claims['exp'] - claims['iat']} s",
                           error="invalid_client")
        jti = claims.get("jti")
        if not isinstance(jti, str) or not jti:
            raise _Refusal(401, rule + " jti", "missing", error="invalid_client")
        with self._lock:
            if jti in self._used_jtis:
                raise _Refusal(401, rule + " jti used once (replay refused)",
                               f"jti {jti!r} was used before", error="invalid_client")
            self._used_jtis.add(jti)
        scopes = (form.get("scope") or "").split()
        if not scopes:
            raise _Refusal(400, "[SEC 4.1; RFC 6749 3.3] scope", "no scope asked for",
                           error="invalid_scope")
        unknown = [s for s in scopes if s not in KNOWN_SCOPES]
        if unknown:
            raise _Refusal(400, "[SEC 4.1; AGS 3.1; NRPS] scope is a known scope",
                           f"unknown scope(s) {unknown}", error="invalid_scope")
        token = secrets.token_urlsafe(32)
        with self._lock:
            self.tokens[token] = {"scopes": set(scopes), "expires": now + self.token_lifetime}
        return {"access_token": token, "token_type": "Bearer",
                "expires_in": self.token_lifetime, "scope": " ".join(scopes)}

    def _authorize(self, authorization: str | None, needed: tuple[str, ...]) -> None:
        """[SEC 4.1; RFC 6750 2.1, 3.1] a Bearer token, unexpired, with one of ``needed``."""
        rule = "[SEC 4.1; RFC 6750] Authorization: Bearer <access token>"
        scheme, _, token = (authorization or "").partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise _Refusal(401, rule, "no Bearer token", error="invalid_request",
                           headers={"WWW-Authenticate": 'Bearer realm="canvas-lms"'})
        with self._lock:
            known = self.tokens.get(token.strip())
        if known is None:
            raise _Refusal(401, rule, "unknown access token", error="invalid_token",
                           headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        if known["expires"] <= time.time():
            raise _Refusal(401, rule, "expired access token", error="invalid_token",
                           headers={"WWW-Authenticate": 'Bearer error="invalid_token"'})
        if not known["scopes"] & set(needed):
            raise _Refusal(403, "[SEC 4.1; RFC 6750 3.1] the token carries the scope needed",
                           f"needs one of {list(needed)}, has {sorted(known['scopes'])}",
                           error="insufficient_scope",
                           headers={"WWW-Authenticate": 'Bearer error="insufficient_scope"'})

    # AGS / NRPS helpers

    def _paged(self, items: list, query: dict[str, list[str]], base: str,
               rule: str) -> tuple[list, str]:
        """One page of ``items`` and its Link header [AGS 3.2 limit and paging; NRPS]."""
        limit = self.page_size
        if "limit" in query:
            raw = query["limit"][0]
            if not raw.isdigit() or int(raw) < 1:
                raise _Refusal(400, rule + " limit is a positive integer", f"limit={raw!r}")
            limit = min(int(raw), self.page_size)
        raw_page = query.get("page", ["1"])[0]
        if not raw_page.isdigit() or int(raw_page) < 1:
            raise _Refusal(400, rule + " page (from a Link header)", f"page={raw_page!r}")
        page = int(raw_page)
        last = max(1, -(-len(items) // limit))

        def url(number: int) -> str:
            kept = {k: v[0] for k, v in query.items() if k != "page"}
            kept["page"] = str(number)
            return base + "?" + urlencode(kept)

        links = [f'<{url(page)}>; rel="current"']
        if page < last:
            links.append(f'<{url(page + 1)}>; rel="next"')
        links += [f'<{url(1)}>; rel="first"', f'<{url(last)}>; rel="last"']
        return items[(page - 1) * limit: page * limit], ",".join(links)

    def _validate_line_item(self, body: Any) -> dict:
        rule = "[AGS 3.2] line item"
        if not isinstance(body, dict):
            raise _Refusal(400, rule, "the body is not a JSON object")
        label = body.get("label")
        if not isinstance(label, str) or not label.strip():
            raise _Refusal(400, rule + " label: a non-empty string", f"label is {label!r}")
        maximum = body.get("scoreMaximum")
        if not _is_number(maximum) or maximum <= 0:
            raise _Refusal(400, rule + " scoreMaximum: a number > 0",
                           f"scoreMaximum is {maximum!r}")
        for field in ("resourceId", "tag", "resourceLinkId"):
            if field in body and body[field] is not None and not isinstance(body[field], str):
                raise _Refusal(400, rule + f" {field}: a string", f"{field} is {body[field]!r}")
        link = body.get("resourceLinkId")
        with self._lock:
            known_link = link is None or link in self.resource_links
        if not known_link:
            raise _Refusal(400, rule + " resourceLinkId names a resource link of the context",
                           f"unknown resource link {link!r}")
        for field in ("startDateTime", "endDateTime"):
            if body.get(field) is not None and not _is_iso_datetime(body[field]):
                raise _Refusal(400, rule + f" {field}: ISO 8601 date and time",
                               f"{field} is {body[field]!r}")
        return {k: v for k, v in body.items() if k != "id" and v is not None}

    def _line_item(self, lineitem_id: str) -> dict:
        with self._lock:
            item = self.line_items.get(lineitem_id)
        if item is None:
            raise _Refusal(404, "[AGS 3.2] the line item exists", f"no line item {lineitem_id}")
        return item

    def _score(self, lineitem_id: str, body: Any) -> dict:
        """[AGS 3.4] validate a score, refuse one out of order, update the result."""
        rule = "[AGS 3.4] score"
        self._line_item(lineitem_id)
        if not isinstance(body, dict):
            raise _Refusal(400, rule, "the body is not a JSON object")
        user_id = body.get("userId")
        if not isinstance(user_id, str) or self.member(user_id) is None:
            raise _Refusal(400, rule + " userId: a member of the context",
                           f"userId {user_id!r} is not a member")
        stamp = parse_timestamp(body.get("timestamp"))
        if stamp is None:
            raise _Refusal(400, rule + " timestamp: ISO 8601 with offset",
                           f"timestamp is {body.get('timestamp')!r}")
        if body.get("activityProgress") not in ACTIVITY_PROGRESS:
            raise _Refusal(400, rule + f" activityProgress in {sorted(ACTIVITY_PROGRESS)}",
                           f"activityProgress is {body.get('activityProgress')!r}")
        if body.get("gradingProgress") not in GRADING_PROGRESS:
            raise _Refusal(400, rule + f" gradingProgress in {sorted(GRADING_PROGRESS)}",
                           f"gradingProgress is {body.get('gradingProgress')!r}")
        given, maximum = body.get("scoreGiven"), body.get("scoreMaximum")
        if (given is None) != (maximum is None):
            raise _Refusal(400, rule + " scoreGiven and scoreMaximum together or neither",
                           f"scoreGiven {given!r}, scoreMaximum {maximum!r}")
        if given is not None:
            if not _is_number(given) or given < 0:
                raise _Refusal(400, rule + " scoreGiven: a number >= 0",
                               f"scoreGiven is {given!r}")
            if not _is_number(maximum) or maximum <= 0:
                raise _Refusal(400, rule + " scoreMaximum: a number > 0",
                               f"scoreMaximum is {maximum!r}")
        comment = body.get("comment")
        if comment is not None and not isinstance(comment, str):
            raise _Refusal(400, rule + " comment: a string", f"comment is {comment!r}")
        key = (lineitem_id, user_id)
        with self._lock:
            last = self._last_timestamp.get(key)
            if last is not None and stamp <= last:
                raise _Refusal(409, rule + " timestamp later than the last accepted score's",
                               f"{body['timestamp']} is not after the last accepted for "
                               f"{user_id!r} on {lineitem_id}")
            self._last_timestamp[key] = stamp
            self.scores.setdefault(lineitem_id, []).append(dict(body))
            result = {"id": f"{lineitem_id}/results/{user_id}", "scoreOf": lineitem_id,
                      "userId": user_id}
            if given is not None:
                result["resultScore"] = given
                result["resultMaximum"] = maximum
            if comment is not None:
                result["comment"] = comment
            self._results[key] = result
        return {"resultUrl": result["id"]}

    # deep linking

    def _deep_linking_return(self, form: dict[str, str]) -> list[dict]:
        """[SEC 5.2; DL] the tool's LtiDeepLinkingResponse JWT (every refusal a 400)."""
        try:
            return self._check_deep_linking_response(form)
        except _Refusal as refusal:
            refusal.status, refusal.error = 400, ""
            raise

    def _check_deep_linking_response(self, form: dict[str, str]) -> list[dict]:
        rule = "[SEC 5.2; DL] deep linking response"
        token = form.get("JWT")
        if not token:
            raise _Refusal(400, rule, "no JWT form field")
        claims = self._verify_tool_jwt(token, rule)
        self._check_times(claims, rule, time.time())
        if claims.get("iss") != self.client_id:
            raise _Refusal(400, rule + " iss = client_id", f"iss is {claims.get('iss')!r}")
        aud = claims.get("aud")
        if not (aud == self.issuer or (isinstance(aud, list) and self.issuer in aud)):
            raise _Refusal(400, rule + " aud = the platform's issuer", f"aud is {aud!r}")
        nonce = claims.get("nonce")
        if not isinstance(nonce, str) or not nonce:
            raise _Refusal(400, rule + " nonce", "missing")
        if claims.get(CLAIM + "message_type") != "LtiDeepLinkingResponse":
            raise _Refusal(400, rule + " message_type LtiDeepLinkingResponse",
                           f"is {claims.get(CLAIM + 'message_type')!r}")
        if claims.get(CLAIM + "version") != "1.3.0":
            raise _Refusal(400, rule + " version 1.3.0",
                           f"is {claims.get(CLAIM + 'version')!r}")
        if claims.get(CLAIM + "deployment_id") != self.deployment_id:
            raise _Refusal(400, rule + " deployment_id as launched",
                           f"is {claims.get(CLAIM + 'deployment_id')!r}")
        data = claims.get(CLAIM_DL_DATA)
        with self._lock:
            known_data = data in self._deep_linking_requests
            if nonce in self._nonces_seen:
                raise _Refusal(400, rule + " nonce used once", f"nonce {nonce!r} replayed")
            self._nonces_seen.add(nonce)
        if not known_data:
            raise _Refusal(400, "[DL] data echoed from deep_linking_settings",
                           f"data is {data!r}")
        items = claims.get(CLAIM_DL_CONTENT_ITEMS, [])
        if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
            raise _Refusal(400, rule + " content_items: a list of objects", f"is {items!r}")
        for item in items:
            if item.get("type") != "ltiResourceLink":
                raise _Refusal(400, "[DL] content item type in accept_types",
                               f"type is {item.get('type')!r}")
        with self._lock:
            self.deep_links.extend(items)
        return items

    # authentication request

    def _authenticate(self, params: dict[str, str]) -> str:
        """[SEC 5.1.1.2, 5.1.1.3] check the authentication request; the auto-submitting
        form that posts the id_token and state to the redirect URI."""
        rule = "[SEC 5.1.1.2] authentication request"
        expected = {"scope": "openid", "response_type": "id_token",
                    "response_mode": "form_post", "prompt": "none", "client_id": self.client_id}
        for name, value in expected.items():
            if name == "scope":
                ok = "openid" in (params.get("scope") or "").split()
            else:
                ok = params.get(name) == value
            if not ok:
                raise _Refusal(400, rule + f" {name}={value}", f"{name} is {params.get(name)!r}")
        redirect_uri = params.get("redirect_uri")
        with self._lock:
            registered = redirect_uri in self.redirect_uris
        if not registered:
            raise _Refusal(400, rule + " redirect_uri is registered",
                           f"redirect_uri {redirect_uri!r} not in {self.redirect_uris}")
        for name in ("state", "nonce"):
            if not params.get(name):
                raise _Refusal(400, rule + f" {name} present", f"no {name}")
        with self._lock:
            login = self._logins.get(params.get("lti_message_hint") or "")
            if login is None:
                raise _Refusal(400, rule + " lti_message_hint as sent",
                               f"lti_message_hint {params.get('lti_message_hint')!r} unknown")
            if params.get("login_hint") != login["user_id"]:
                raise _Refusal(400, rule + " login_hint as sent",
                               f"login_hint {params.get('login_hint')!r}")
            if params["nonce"] in self._nonces_seen:
                raise _Refusal(400, rule + " nonce used once", f"nonce {params['nonce']!r}")
            self._nonces_seen.add(params["nonce"])
        token = self.id_token(login["user_id"], login["roles"],
                              message_type=login["message_type"],
                              resource_link_id=login["resource_link_id"],
                              target_link_uri=login["target_link_uri"],
                              nonce=params["nonce"], custom=login["custom"])
        with self._lock:
            self.launches.append({"user_id": login["user_id"], "redirect_uri": redirect_uri,
                                  "state": params["state"], "nonce": params["nonce"],
                                  "id_token": token})
        return (
            "<!DOCTYPE html><html><head><title>Launching</title></head>"
            '<body onload="document.forms[0].submit()">'
            f'<form method="post" action="{html.escape(redirect_uri)}">'
            f'<input type="hidden" name="id_token" value="{html.escape(token)}">'
            f'<input type="hidden" name="state" value="{html.escape(params["state"])}">'
            "<noscript><button type=\"submit\">Continue</button></noscript>"
            "</form></body></html>")

    # routing

    def _route(self, method: str, target: str, headers: Any, body: bytes) -> tuple:
        """(status, content type, body bytes, extra headers) of a request, or _Refusal."""
        split = urlsplit(target)
        path, query = split.path, parse_qs(split.query, keep_blank_values=True)
        base_items = urlsplit(self.lineitems_url).path

        def need_content_type(media_type: str, rule: str) -> None:
            got = _media_type(headers.get("Content-Type"))
            if got != media_type:
                raise _Refusal(415, rule + f" Content-Type {media_type}",
                               f"Content-Type is {headers.get('Content-Type')!r}")

        def need_accept(media_type: str, rule: str) -> None:
            if not _accepts(headers.get("Accept"), media_type):
                raise _Refusal(406, rule + f" Accept includes {media_type}",
                               f"Accept is {headers.get('Accept')!r}")

        def json_body(rule: str) -> Any:
            try:
                return json.loads(body.decode("utf-8"))
            except (UnicodeDecodeError, json.JSONDecodeError) as error:
                raise _Refusal(400, rule + " body is JSON", str(error)) from None

        def form_body(rule: str, oauth: bool = False) -> dict[str, str]:
            if oauth and _media_type(headers.get("Content-Type")) != MEDIA_FORM:
                raise _Refusal(400, rule + f" Content-Type {MEDIA_FORM} [RFC 6749 3.2]",
                               f"Content-Type is {headers.get('Content-Type')!r}",
                               error="invalid_request")
            need_content_type(MEDIA_FORM, rule)
            try:
                fields = parse_qs(body.decode("utf-8"), keep_blank_values=True)
            except UnicodeDecodeError:
                raise _Refusal(400, rule, "the form is not UTF-8") from None
            return {k: v[0] for k, v in fields.items()}

        def reply(status: int, media_type: str, payload: Any, **extra: str) -> tuple:
            return status, media_type, json.dumps(payload).encode(), extra

        def methods(*allowed: str) -> None:
            if method not in allowed:
                raise _Refusal(405, "[HTTP] method allowed on the endpoint",
                               f"{method} not in {list(allowed)}",
                               headers={"Allow": ", ".join(allowed)})

        if path == urlsplit(self.token_url).path:
            methods("POST")
            rule = "[SEC 4.1; RFC 6749 4.4.2] token request"
            form = form_body(rule, oauth=True)
            return reply(200, "application/json", self._token(form),
                         **{"Cache-Control": "no-store"})
        if path == urlsplit(self.jwks_url).path:
            methods("GET")
            return reply(200, "application/json", self.public_jwks)
        if path == urlsplit(self.auth_url).path:
            methods("GET", "POST")
            params = ({k: v[0] for k, v in query.items()} if method == "GET"
                      else form_body("[SEC 5.1.1.2] authentication request (form post)"))
            return 200, "text/html; charset=utf-8", self._authenticate(params).encode(), {}
        if path == urlsplit(self.deep_link_return_url).path:
            methods("POST")
            items = self._deep_linking_return(form_body("[DL] deep linking response"))
            text = f"<!DOCTYPE html><p>{len(items)} item(s) received.</p>"
            return 200, "text/html; charset=utf-8", text.encode(), {}
        if path == urlsplit(self.memberships_url).path:
            methods("GET")
            rule = "[NRPS] membership container"
            self._authorize(headers.get("Authorization"), (SCOPE_NRPS,))
            need_accept(MEDIA_MEMBERSHIP_CONTAINER, rule)
            with self._lock:
                members = [dict(m) for m in self.members]
            if "role" in query:
                role = query["role"][0]
                members = [m for m in members if any(
                    r == role or r.rpartition("#")[2] == role and "membership#" in r
                    for r in m["roles"])]
            page, link = self._paged(members, query, self.memberships_url, rule)
            container = {"id": self.issuer + target, "context": {
                k: self.context[k] for k in ("id", "label", "title")}, "members": page}
            return reply(200, MEDIA_MEMBERSHIP_CONTAINER, container, Link=link)
        if path == base_items:
            rule = "[AGS 3.2] line item container"
            methods("GET", "POST")
            if method == "GET":
                self._authorize(headers.get("Authorization"),
                                (SCOPE_LINEITEM, SCOPE_LINEITEM_READONLY))
                need_accept(MEDIA_LINEITEM_CONTAINER, rule)
                with self._lock:
                    items = [dict(i) for i in self.line_items.values()]
                for param, field in (("resource_link_id", "resourceLinkId"),
                                     ("resource_id", "resourceId"), ("tag", "tag")):
                    if param in query:
                        items = [i for i in items if i.get(field) == query[param][0]]
                page, link = self._paged(items, query, self.lineitems_url, rule)
                return reply(200, MEDIA_LINEITEM_CONTAINER, page, Link=link)
            self._authorize(headers.get("Authorization"), (SCOPE_LINEITEM,))
            need_content_type(MEDIA_LINEITEM, rule)
            item = self._validate_line_item(json_body(rule))
            with self._lock:
                item_id = f"{self.lineitems_url}/{self._next_line_item}"
                self._next_line_item += 1
                item = {"id": item_id, **item}
                self.line_items[item_id] = item
            return reply(201, MEDIA_LINEITEM, item, Location=item_id)
        match = re.fullmatch(re.escape(base_items) + r"/(\d+)(/scores|/results(?:/([^/]+))?)?",
                             path)
        if match is None:
            raise _Refusal(404, "[HTTP] a known endpoint", f"no endpoint at {path}")
        item_id = f"{self.lineitems_url}/{match.group(1)}"
        if match.group(2) == "/scores":
            methods("POST")
            rule = "[AGS 3.4] score publish"
            self._authorize(headers.get("Authorization"), (SCOPE_SCORE,))
            need_content_type(MEDIA_SCORE, rule)
            return reply(200, "application/json", self._score(item_id, json_body(rule)))
        if match.group(2) is not None:
            methods("GET")
            rule = "[AGS 3.3] result service"
            self._authorize(headers.get("Authorization"), (SCOPE_RESULT_READONLY,))
            self._line_item(item_id)
            if match.group(3) is not None:
                need_accept(MEDIA_RESULT, rule)
                found = self.result(item_id, match.group(3))
                if found is None:
                    raise _Refusal(404, rule, f"no result for {match.group(3)!r}")
                return reply(200, MEDIA_RESULT, found)
            need_accept(MEDIA_RESULT_CONTAINER, rule)
            with self._lock:
                results = [dict(r) for (i, _), r in self._results.items() if i == item_id]
            if "user_id" in query:
                results = [r for r in results if r["userId"] == query["user_id"][0]]
            page, link = self._paged(results, query, item_id + "/results", rule)
            return reply(200, MEDIA_RESULT_CONTAINER, page, Link=link)
        rule = "[AGS 3.2] line item"
        methods("GET", "PUT", "DELETE")
        if method == "GET":
            self._authorize(headers.get("Authorization"),
                            (SCOPE_LINEITEM, SCOPE_LINEITEM_READONLY))
            need_accept(MEDIA_LINEITEM, rule)
            return reply(200, MEDIA_LINEITEM, dict(self._line_item(item_id)))
        self._authorize(headers.get("Authorization"), (SCOPE_LINEITEM,))
        self._line_item(item_id)
        if method == "DELETE":
            with self._lock:
                self.line_items.pop(item_id, None)
                for key in [k for k in self._results if k[0] == item_id]:
                    del self._results[key]
            return 204, "", b"", {}
        need_content_type(MEDIA_LINEITEM, rule)
        body_json = json_body(rule)
        if isinstance(body_json, dict) and body_json.get("id") not in (None, item_id):
            raise _Refusal(400, rule + " id of the updated line item is its URL",
                           f"id is {body_json.get('id')!r}")
        item = {"id": item_id, **self._validate_line_item(body_json)}
        with self._lock:
            self.line_items[item_id] = item
        return reply(200, MEDIA_LINEITEM, item)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "TestCanvas/1.0"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        pass

    def _handle(self) -> None:
        platform: Platform = self.server.platform  # type: ignore[attr-defined]
        body = self._body()
        method, target = self.command, self.path
        injected = platform._record(method, target)
        if injected is not None:
            payload = json.dumps({"errors": [{"type": "injected",
                                              "message": f"injected {injected}"}]}).encode()
            self._send(injected, "application/json", payload, {})
            return
        try:
            status, media_type, payload, extra = platform._route(method, target, self.headers,
                                                                 body)
        except _Refusal as refusal:
            if refusal.violation:
                platform._violation(method, target, refusal)
            if refusal.error:
                content = {"error": refusal.error, "error_description": str(refusal)}
            else:
                content = {"errors": [{"type": "bad_request", "message": str(refusal)}]}
            status, media_type, payload = refusal.status, "application/json", \
                json.dumps(content).encode()
            extra = refusal.headers
        except Exception as error:  # a bug of the platform: visible, never silent
            platform._violation(method, target, _Refusal(
                500, "[PLATFORM BUG]", f"{type(error).__name__}: {error}"))
            status, media_type, payload, extra = 500, "text/plain", repr(error).encode(), {}
        self._send(status, media_type, payload, extra)

    def _body(self) -> bytes:
        if "chunked" in (self.headers.get("Transfer-Encoding") or "").lower():
            chunks = []
            while True:
                size = int(self.rfile.readline().split(b";", 1)[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass  # trailers
                    return b"".join(chunks)
                chunks.append(self.rfile.read(size))
                self.rfile.readline()
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            length = 0
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, media_type: str, payload: bytes,
              extra: dict[str, str]) -> None:
        self.send_response(status)
        if media_type:
            self.send_header("Content-Type", media_type)
        self.send_header("Content-Length", str(len(payload)))
        for name, value in extra.items():
            self.send_header(name, value)
        self.end_headers()
        if payload:
            self.wfile.write(payload)

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = _handle


__all__ = [
    "ACTIVITY_PROGRESS", "CLAIM", "CLAIM_AGS", "CLAIM_DL_CONTENT_ITEMS", "CLAIM_DL_DATA",
    "CLAIM_DL_SETTINGS", "CLAIM_NRPS", "CLIENT_ASSERTION_TYPE", "DEFAULT_RESOURCE_LINK_ID",
    "GRADING_PROGRESS", "INSTRUCTOR", "KNOWN_SCOPES", "LEARNER", "MEDIA_FORM",
    "MEDIA_LINEITEM", "MEDIA_LINEITEM_CONTAINER", "MEDIA_MEMBERSHIP_CONTAINER", "MEDIA_RESULT",
    "MEDIA_RESULT_CONTAINER", "MEDIA_SCORE", "SCOPE_LINEITEM", "SCOPE_LINEITEM_READONLY",
    "SCOPE_NRPS", "SCOPE_RESULT_READONLY", "SCOPE_SCORE", "TEACHING_ASSISTANT", "Platform",
    "parse_timestamp",
]
