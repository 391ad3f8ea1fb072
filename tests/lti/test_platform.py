"""The test platform enforces each rule it claims to (tests/lti/platform.py).

A minimal client — ``requests`` and PyJWT with an RSA key made here — plays the tool. The
rules and where they come from:

* Token endpoint — IMS Security Framework 1.0, 4.1 "Using OAuth 2.0 Client Credentials
  Grant" and 4.1.1 "Using JSON Web Tokens with OAuth 2.0 Client Credentials Grant" (RFC 7523
  section 3: iss = sub = client_id, aud = token endpoint, exp, iat, jti used once; RFC 6749
  5.2 errors): a correct request is granted; a replayed jti, a wrong aud, an expired or
  too long-lived assertion, a wrong key, an unknown scope are refused.
* Bearer tokens on every service — Security Framework 4.1, RFC 6750 3.1: 401 without or with
  an unknown or expired token, 403 without the scope the call needs.
* Line items — AGS 2.0 3.2 "Line item service": media types, filters, limit, paging by Link
  rel="next", label and scoreMaximum required, resourceLinkId known.
* Scores and results — AGS 2.0 3.4 "Score publish service" and 3.3 "Result service": score
  fields, sub-second timestamps, a score not newer than the last refused (409), a score
  without scoreGiven clears the result.
* Memberships — NRPS 2.0: the membership container, role filter, paging.
* Keys and launches — Security Framework 5.1.1 (OIDC third-party initiated login,
  authentication request and response), 5.1.2 (ID token), 5.2 (tool-originating messages),
  6 (key management); LTI 1.3 Core 5.3 "Required message claims"; Deep Linking 2.0.
"""

from __future__ import annotations

import re
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from urllib.parse import parse_qs, urlsplit

import jwt
import pytest
import requests
from cryptography.hazmat.primitives.asymmetric import rsa
from jwt.algorithms import RSAAlgorithm

from tests.lti.platform import (
    CLAIM,
    CLAIM_AGS,
    CLAIM_DL_CONTENT_ITEMS,
    CLAIM_DL_DATA,
    CLAIM_DL_SETTINGS,
    CLAIM_NRPS,
    CLIENT_ASSERTION_TYPE,
    DEFAULT_RESOURCE_LINK_ID,
    INSTRUCTOR,
    LEARNER,
    MEDIA_LINEITEM,
    MEDIA_LINEITEM_CONTAINER,
    MEDIA_MEMBERSHIP_CONTAINER,
    MEDIA_RESULT,
    MEDIA_RESULT_CONTAINER,
    MEDIA_SCORE,
    SCOPE_LINEITEM,
    SCOPE_LINEITEM_READONLY,
    SCOPE_NRPS,
    SCOPE_RESULT_READONLY,
    SCOPE_SCORE,
    TEACHING_ASSISTANT,
    Platform,
    parse_timestamp,
)

TOOL_KID = "tool-key-1"
ALL_SCOPES = [SCOPE_LINEITEM, SCOPE_LINEITEM_READONLY, SCOPE_RESULT_READONLY, SCOPE_SCORE,
              SCOPE_NRPS]
REDIRECT = "https://tool.invalid/lti/launch"
LOGIN = "https://tool.invalid/lti/login"


@pytest.fixture(scope="module")
def tool_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


@pytest.fixture(scope="module")
def other_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwks(key: rsa.RSAPrivateKey, kid: str = TOOL_KID) -> dict:
    jwk = RSAAlgorithm.to_jwk(key.public_key(), as_dict=True)
    jwk.update(kid=kid, alg="RS256", use="sig")
    return {"keys": [jwk]}


@pytest.fixture
def platform(tool_key):
    with Platform() as running:
        running.register_tool(public_jwks(tool_key), redirect_uris=[REDIRECT], login_url=LOGIN)
        running.add_member("u1", "Ada Lovelace", "ada@example.org", sourcedid="s1")
        running.add_member("u2", "Alan Turing", "alan@example.org")
        running.add_member("u3", "Grace Hopper")
        running.add_member("t1", "Tess Assist", roles=[TEACHING_ASSISTANT])
        running.add_member("i1", "Ida Instructor", roles=[INSTRUCTOR])
        yield running


def assertion(platform: Platform, key, kid: str | None = TOOL_KID, **claims) -> str:
    now = int(time.time())
    payload = {"iss": platform.client_id, "sub": platform.client_id,
               "aud": platform.token_url, "iat": now, "exp": now + 300,
               "jti": str(uuid.uuid4())}
    payload.update(claims)
    payload = {k: v for k, v in payload.items() if v is not None}
    headers = {"kid": kid} if kid else {}
    return jwt.encode(payload, key, algorithm="RS256", headers=headers)


def token_request(platform: Platform, client_assertion: str, scopes=ALL_SCOPES, **form):
    data = {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": client_assertion, "scope": " ".join(scopes)}
    data.update(form)
    return requests.post(platform.token_url, data=data, timeout=5)


def token(platform: Platform, key, scopes=ALL_SCOPES) -> str:
    response = token_request(platform, assertion(platform, key), scopes)
    assert response.status_code == 200, response.text
    return response.json()["access_token"]


def bearer(access_token: str, **headers) -> dict:
    return {"Authorization": "Bearer " + access_token, **headers}


def create_line_item(platform: Platform, access: str, **fields) -> dict:
    body = {"label": "Assignment", "scoreMaximum": 10, **fields}
    response = requests.post(platform.lineitems_url, json=body, timeout=5,
                             headers=bearer(access, **{"Content-Type": MEDIA_LINEITEM}))
    assert response.status_code == 201, response.text
    return response.json()


def post_score(platform: Platform, access: str, lineitem_id: str, **fields):
    body = {"userId": "u1", "timestamp": "2026-11-29T16:00:00.123+00:00",
            "activityProgress": "Completed", "gradingProgress": "FullyGraded",
            "scoreGiven": 7, "scoreMaximum": 10, **fields}
    body = {k: v for k, v in body.items() if v is not None}
    return requests.post(lineitem_id + "/scores", json=body, timeout=5,
                         headers=bearer(access, **{"Content-Type": MEDIA_SCORE}))


def next_link(response: requests.Response) -> str | None:
    for part in response.headers.get("Link", "").split(","):
        match = re.fullmatch(r'\s*<([^>]*)>\s*;\s*rel="next"\s*', part)
        if match:
            return match.group(1)
    return None


def every_page(url: str, headers: dict, params: dict | None = None) -> list:
    pages = []
    while url:
        response = requests.get(url, headers=headers, params=params, timeout=5)
        assert response.status_code == 200, response.text
        pages.append(response.json())
        url, params = next_link(response), None
    return pages


# ---- token endpoint [SEC 4.1, 4.1.1] ------------------------------------------------------


def test_a_correct_token_request_is_granted(platform, tool_key):
    response = token_request(platform, assertion(platform, tool_key), [SCOPE_SCORE, SCOPE_NRPS])
    assert response.status_code == 200, response.text
    granted = response.json()
    assert granted["token_type"] == "Bearer" and granted["expires_in"] == 3600
    assert granted["scope"].split() == [SCOPE_SCORE, SCOPE_NRPS]
    assert platform.tokens[granted["access_token"]]["scopes"] == {SCOPE_SCORE, SCOPE_NRPS}
    # aud may be a list that contains the token endpoint; a key found without kid
    listed = assertion(platform, tool_key, kid=None, aud=[platform.token_url, "x"])
    assert token_request(platform, listed).status_code == 200
    assert platform.violations == []
    assert platform.requests[0] == ("POST", "/login/oauth2/token")


def test_a_replayed_jti_is_refused(platform, tool_key):
    once = assertion(platform, tool_key)
    assert token_request(platform, once).status_code == 200
    again = token_request(platform, once)
    assert again.status_code == 401 and again.json()["error"] == "invalid_client"
    assert len(platform.violations) == 1 and "jti" in platform.violations[0]


# Times as seconds from the moment of the request ("iat" and "exp" only): a time taken when
# the tests are collected may be long past when this one runs.
@pytest.mark.parametrize(("claims", "status", "rule"), [
    ({"aud": "http://127.0.0.1:1/login/oauth2/token"}, 401, "aud"),
    ({"iat": -900, "exp": -300}, 401, "expired"),
    ({"iat": 600, "exp": 900}, 401, "future"),
    ({"exp": 7200}, 401, "at most an hour"),
    ({"iss": "someone-else"}, 401, "iss"),
    ({"sub": "someone-else"}, 401, "sub"),
    ({"jti": None}, 401, "jti"),
    ({"exp": None}, 401, "exp"),
])
def test_a_bad_client_assertion_is_refused(platform, tool_key, claims, status, rule):
    now = int(time.time())
    claims = {name: now + value if name in ("iat", "exp") and isinstance(value, int) else value
              for name, value in claims.items()}
    response = token_request(platform, assertion(platform, tool_key, **claims))
    assert response.status_code == status, response.text
    assert response.json()["error"] == "invalid_client"
    assert len(platform.violations) == 1 and rule in platform.violations[0]


def test_an_assertion_signed_with_another_key_is_refused(platform, other_key):
    response = token_request(platform, assertion(platform, other_key))
    assert response.status_code == 401
    assert "signature" in platform.violations[0]
    unknown_kid = token_request(platform, assertion(platform, other_key, kid="not-registered"))
    assert unknown_kid.status_code == 401 and "kid" in platform.violations[1]


@pytest.mark.parametrize(("form", "scopes", "status", "error"), [
    ({}, [SCOPE_SCORE, "https://purl.imsglobal.org/spec/lti-ags/scope/everything"], 400,
     "invalid_scope"),
    ({}, [], 400, "invalid_scope"),
    ({"grant_type": "password"}, ALL_SCOPES, 400, "unsupported_grant_type"),
    ({"client_assertion_type": "urn:other"}, ALL_SCOPES, 400, "invalid_request"),
])
def test_a_bad_token_form_is_refused(platform, tool_key, form, scopes, status, error):
    response = token_request(platform, assertion(platform, tool_key), scopes, **form)
    assert response.status_code == status and response.json()["error"] == error
    assert len(platform.violations) == 1


def test_a_token_request_must_be_a_form(platform, tool_key):
    body = {"grant_type": "client_credentials", "client_assertion_type": CLIENT_ASSERTION_TYPE,
            "client_assertion": assertion(platform, tool_key), "scope": SCOPE_SCORE}
    response = requests.post(platform.token_url, json=body, timeout=5)
    assert response.status_code == 400 and response.json()["error"] == "invalid_request"
    assert "Content-Type" in platform.violations[0]


# ---- Bearer tokens on the services [SEC 4.1; RFC 6750] -------------------------------------


def test_a_service_call_needs_a_valid_token_with_its_scope(platform, tool_key):
    accept = {"Accept": MEDIA_LINEITEM_CONTAINER}
    assert requests.get(platform.lineitems_url, headers=accept, timeout=5).status_code == 401
    unknown = requests.get(platform.lineitems_url, headers=bearer("nope", **accept), timeout=5)
    assert unknown.status_code == 401
    assert unknown.headers["WWW-Authenticate"].startswith("Bearer")
    score_only = token(platform, tool_key, [SCOPE_SCORE])
    missing = requests.get(platform.lineitems_url, headers=bearer(score_only, **accept),
                           timeout=5)
    assert missing.status_code == 403 and missing.json()["error"] == "insufficient_scope"
    readonly = token(platform, tool_key, [SCOPE_LINEITEM_READONLY])
    ok = requests.get(platform.lineitems_url, headers=bearer(readonly, **accept), timeout=5)
    assert ok.status_code == 200
    refused = requests.post(platform.lineitems_url, json={"label": "x", "scoreMaximum": 1},
                            headers=bearer(readonly, **{"Content-Type": MEDIA_LINEITEM}),
                            timeout=5)
    assert refused.status_code == 403
    platform.expire_tokens()
    expired = requests.get(platform.lineitems_url, headers=bearer(readonly, **accept),
                           timeout=5)
    assert expired.status_code == 401 and "expired" in platform.violations[-1]
    assert len(platform.violations) == 5


# ---- line items [AGS 3.2] ------------------------------------------------------------------


def test_line_items_are_created_listed_by_page_and_filtered(platform, tool_key):
    access = token(platform, tool_key)
    platform.add_resource_link("rl-2")
    created = [create_line_item(platform, access, label=f"Assignment {n}", tag=f"t{n % 2}",
                                resourceId=f"res-{n}",
                                resourceLinkId="rl-2" if n == 4 else DEFAULT_RESOURCE_LINK_ID,
                                startDateTime="2026-11-01T00:00:00Z",
                                endDateTime="2026-12-01T23:59:59.5+01:00")
               for n in range(5)]
    assert [c["id"] for c in created] == [platform.lineitems_url + f"/{n}" for n in range(1, 6)]
    assert set(platform.line_items) == {c["id"] for c in created}
    headers = bearer(access, Accept=MEDIA_LINEITEM_CONTAINER)
    pages = every_page(platform.lineitems_url, headers)
    assert [len(p) for p in pages] == [2, 2, 1]
    assert [i["id"] for p in pages for i in p] == [c["id"] for c in created]
    assert [i["label"] for p in every_page(platform.lineitems_url, headers, {"tag": "t1"})
            for i in p] == ["Assignment 1", "Assignment 3"]
    assert [i["resourceId"] for p in every_page(platform.lineitems_url, headers,
                                                {"resource_link_id": "rl-2"})
            for i in p] == ["res-4"]
    assert [i["resourceId"] for p in every_page(platform.lineitems_url, headers,
                                                {"resource_id": "res-2"})
            for i in p] == ["res-2"]
    assert [len(p) for p in every_page(platform.lineitems_url, headers, {"limit": "1"})] == \
        [1] * 5
    assert platform.violations == []


def test_a_line_item_is_read_updated_and_deleted(platform, tool_key):
    access = token(platform, tool_key)
    item = create_line_item(platform, access, label="Notebook 1", scoreMaximum=20)
    read = requests.get(item["id"], headers=bearer(access, Accept=MEDIA_LINEITEM), timeout=5)
    assert read.status_code == 200 and read.json() == item
    changed = dict(item, label="Notebook 1 (final)", scoreMaximum=25.5)
    put = requests.put(item["id"], json=changed, timeout=5,
                       headers=bearer(access, **{"Content-Type": MEDIA_LINEITEM}))
    assert put.status_code == 200 and put.json() == changed
    assert platform.line_items[item["id"]] == changed
    assert requests.delete(item["id"], headers=bearer(access), timeout=5).status_code == 204
    gone = requests.get(item["id"], headers=bearer(access, Accept=MEDIA_LINEITEM), timeout=5)
    assert gone.status_code == 404 and item["id"] not in platform.line_items
    assert len(platform.violations) == 1 and "exists" in platform.violations[0]


@pytest.mark.parametrize(("fields", "rule"), [
    ({"label": ""}, "label"),
    ({"label": None}, "label"),
    ({"scoreMaximum": 0}, "scoreMaximum"),
    ({"scoreMaximum": "10"}, "scoreMaximum"),
    ({"resourceLinkId": "no-such-link"}, "resourceLinkId"),
    ({"startDateTime": "next monday"}, "startDateTime"),
    ({"tag": 3}, "tag"),
])
def test_a_bad_line_item_is_refused(platform, tool_key, fields, rule):
    access = token(platform, tool_key)
    body = {"label": "Assignment", "scoreMaximum": 10, **fields}
    body = {k: v for k, v in body.items() if v is not None}
    response = requests.post(platform.lineitems_url, json=body, timeout=5,
                             headers=bearer(access, **{"Content-Type": MEDIA_LINEITEM}))
    assert response.status_code == 400
    assert len(platform.violations) == 1 and rule in platform.violations[0]
    assert platform.line_items == {}


def test_wrong_media_types_are_refused(platform, tool_key):
    access = token(platform, tool_key)
    wrong_type = requests.post(platform.lineitems_url, json={"label": "x", "scoreMaximum": 1},
                               headers=bearer(access), timeout=5)  # application/json
    assert wrong_type.status_code == 415
    wrong_accept = requests.get(platform.lineitems_url, timeout=5,
                                headers=bearer(access, Accept="application/json"))
    assert wrong_accept.status_code == 406
    item = create_line_item(platform, access)
    score = requests.post(item["id"] + "/scores", headers=bearer(access), timeout=5, json={
        "userId": "u1", "timestamp": "2026-11-29T16:00:00Z", "activityProgress": "Completed",
        "gradingProgress": "FullyGraded"})
    assert score.status_code == 415
    results = requests.get(item["id"] + "/results", headers=bearer(access), timeout=5)
    assert results.status_code == 406
    members = requests.get(platform.memberships_url, headers=bearer(access), timeout=5)
    assert members.status_code == 406
    assert [v.split("(")[-1] for v in platform.violations] == [
        f"POST {urlsplit(platform.lineitems_url).path} -> 415)",
        f"GET {urlsplit(platform.lineitems_url).path} -> 406)",
        f"POST {urlsplit(item['id']).path}/scores -> 415)",
        f"GET {urlsplit(item['id']).path}/results -> 406)",
        f"GET {urlsplit(platform.memberships_url).path} -> 406)"]
    # an Accept that lists the media type among others, with parameters, is fine
    several = f"application/json;q=0.5, {MEDIA_LINEITEM_CONTAINER};q=1"
    assert requests.get(platform.lineitems_url, headers=bearer(access, Accept=several),
                        timeout=5).status_code == 200


# ---- scores and results [AGS 3.3, 3.4] -----------------------------------------------------


def test_scores_are_accepted_and_results_follow(platform, tool_key):
    access = token(platform, tool_key)
    item = create_line_item(platform, access)
    first = post_score(platform, access, item["id"], comment="well done")
    assert first.status_code == 200, first.text
    assert first.json()["resultUrl"] == item["id"] + "/results/u1"
    assert platform.result(item["id"], "u1") == {
        "id": item["id"] + "/results/u1", "scoreOf": item["id"], "userId": "u1",
        "resultScore": 7, "resultMaximum": 10, "comment": "well done"}
    # nanosecond precision, another offset (= 16:00:00.1234567891 UTC), above the maximum
    later = post_score(platform, access, item["id"], scoreGiven=12, scoreMaximum=10,
                       timestamp="2026-11-29T17:00:00.1234567891+01:00")
    assert later.status_code == 200, later.text
    assert platform.result(item["id"], "u1")["resultScore"] == 12
    assert post_score(platform, access, item["id"], userId="u2", scoreGiven=3.5,
                      timestamp="2026-11-29T16:00:00Z").status_code == 200
    results = requests.get(item["id"] + "/results", timeout=5,
                           headers=bearer(access, Accept=MEDIA_RESULT_CONTAINER))
    assert results.status_code == 200
    assert {r["userId"]: r["resultScore"] for r in results.json()} == {"u1": 12, "u2": 3.5}
    only = requests.get(item["id"] + "/results", params={"user_id": "u2"}, timeout=5,
                        headers=bearer(access, Accept=MEDIA_RESULT_CONTAINER)).json()
    assert [(r["userId"], r["scoreOf"], r["resultMaximum"]) for r in only] == \
        [("u2", item["id"], 10)]
    # a score without scoreGiven clears the result's score
    cleared = post_score(platform, access, item["id"], scoreGiven=None, scoreMaximum=None,
                         activityProgress="Submitted", gradingProgress="PendingManual",
                         timestamp="2026-11-29T16:30:00Z")
    assert cleared.status_code == 200
    assert "resultScore" not in platform.result(item["id"], "u1")
    assert len(platform.scores[item["id"]]) == 4
    assert platform.result(item["id"], "u3") is None
    assert platform.violations == []


def test_a_score_not_newer_than_the_last_is_refused(platform, tool_key):
    access = token(platform, tool_key)
    item = create_line_item(platform, access)
    stamp = "2026-11-29T16:00:00.500Z"
    assert post_score(platform, access, item["id"], timestamp=stamp).status_code == 200
    older = post_score(platform, access, item["id"], scoreGiven=9,
                       timestamp="2026-11-29T16:00:00.499999Z")
    assert older.status_code == 409
    same = post_score(platform, access, item["id"], scoreGiven=9,
                      timestamp="2026-11-29T17:00:00.5+01:00")
    assert same.status_code == 409
    assert len(platform.violations) == 2
    assert all("timestamp later than the last" in v for v in platform.violations)
    assert platform.result(item["id"], "u1")["resultScore"] == 7
    assert len(platform.scores[item["id"]]) == 1
    # another user, or another line item, has its own order
    assert post_score(platform, access, item["id"], userId="u2",
                      timestamp="2026-11-29T15:00:00Z").status_code == 200


@pytest.mark.parametrize(("fields", "rule"), [
    ({"userId": "stranger"}, "userId"),
    ({"timestamp": "2026-11-29T16:00:00"}, "timestamp"),
    ({"timestamp": "29/11/2026 16:00"}, "timestamp"),
    ({"timestamp": None}, "timestamp"),
    ({"activityProgress": "Done"}, "activityProgress"),
    ({"gradingProgress": None}, "gradingProgress"),
    ({"scoreMaximum": None}, "together"),
    ({"scoreGiven": None}, "together"),
    ({"scoreGiven": -1}, "scoreGiven"),
    ({"scoreMaximum": 0}, "scoreMaximum"),
    ({"scoreGiven": True}, "scoreGiven"),
    ({"comment": 5}, "comment"),
])
def test_a_bad_score_is_refused(platform, tool_key, fields, rule):
    access = token(platform, tool_key)
    item = create_line_item(platform, access)
    response = post_score(platform, access, item["id"], **fields)
    assert response.status_code == 400, response.text
    assert len(platform.violations) == 1 and rule in platform.violations[0]
    assert platform.scores == {} and platform.result(item["id"], "u1") is None


def test_the_result_url_and_concurrent_scores(platform, tool_key):
    access = token(platform, tool_key)
    item = create_line_item(platform, access)
    users = [m["user_id"] for m in platform.members]

    def score(user_id: str) -> int:
        return post_score(platform, access, item["id"], userId=user_id).status_code

    with ThreadPoolExecutor(max_workers=len(users)) as pool:
        assert list(pool.map(score, users)) == [200] * len(users)
    result_url = item["id"] + "/results/u2"
    one = requests.get(result_url, headers=bearer(access, Accept=MEDIA_RESULT), timeout=5)
    assert one.status_code == 200 and one.json() == platform.result(item["id"], "u2")
    assert len(platform.scores[item["id"]]) == len(users) and platform.violations == []
    moved = dict(item, id=platform.lineitems_url + "/77")
    put = requests.put(item["id"], json=moved, timeout=5,
                       headers=bearer(access, **{"Content-Type": MEDIA_LINEITEM}))
    assert put.status_code == 400 and "id of the updated" in platform.violations[0]
    assert requests.delete(item["id"], headers=bearer(access), timeout=5).status_code == 204
    assert platform.result(item["id"], "u2") is None


def test_a_score_to_an_unknown_line_item_is_refused(platform, tool_key):
    access = token(platform, tool_key)
    response = post_score(platform, access, platform.lineitems_url + "/99")
    assert response.status_code == 404 and len(platform.violations) == 1


def test_timestamps_are_compared_exactly():
    assert parse_timestamp("2026-11-29T16:00:00Z") == parse_timestamp("2026-11-29T17:00:00+01:00")
    assert parse_timestamp("2026-11-29T16:00:00.1234567891Z") > \
        parse_timestamp("2026-11-29T16:00:00.123456789Z")
    assert parse_timestamp("2026-11-29T16:00:00") is None
    assert parse_timestamp("2026-13-29T16:00:00Z") is None


# ---- memberships [NRPS] --------------------------------------------------------------------


def test_memberships_are_paged_and_filtered(platform, tool_key):
    access = token(platform, tool_key, [SCOPE_NRPS])
    headers = bearer(access, Accept=MEDIA_MEMBERSHIP_CONTAINER)
    pages = every_page(platform.memberships_url, headers)
    assert [len(p["members"]) for p in pages] == [2, 2, 1]
    members = [m for p in pages for m in p["members"]]
    assert [m["user_id"] for m in members] == ["u1", "u2", "u3", "t1", "i1"]
    assert pages[0]["context"] == {"id": platform.context["id"], "label": "ATT-NLP",
                                   "title": "Attention in NLP"}
    assert members[0] == {"status": "Active", "name": "Ada Lovelace", "given_name": "Ada",
                          "family_name": "Lovelace", "email": "ada@example.org",
                          "user_id": "u1", "lis_person_sourcedid": "s1", "roles": [LEARNER]}
    assert "email" not in members[2]
    learners = every_page(platform.memberships_url, headers, {"role": LEARNER})
    assert [m["user_id"] for p in learners for m in p["members"]] == ["u1", "u2", "u3"]
    short = every_page(platform.memberships_url, headers, {"role": "Instructor"})
    assert [m["user_id"] for p in short for m in p["members"]] == ["i1"]
    limited = every_page(platform.memberships_url, headers, {"limit": "1"})
    assert len(limited) == 5
    assert platform.violations == []
    score_only = token(platform, tool_key, [SCOPE_SCORE])
    assert requests.get(platform.memberships_url, timeout=5, headers=bearer(
        score_only, Accept=MEDIA_MEMBERSHIP_CONTAINER)).status_code == 403


# ---- failure injection ---------------------------------------------------------------------


def test_fail_next_fails_the_next_matching_requests(platform, tool_key):
    access = token(platform, tool_key)
    item = create_line_item(platform, access)
    platform.fail_next(2, 503, path_contains="/scores")
    assert post_score(platform, access, item["id"]).status_code == 503
    headers = bearer(access, Accept=MEDIA_LINEITEM_CONTAINER)
    assert requests.get(platform.lineitems_url, headers=headers, timeout=5).status_code == 200
    assert post_score(platform, access, item["id"]).status_code == 503
    assert post_score(platform, access, item["id"]).status_code == 200
    platform.fail_next(1, 429)
    assert requests.get(platform.lineitems_url, headers=headers, timeout=5).status_code == 429
    assert len(platform.scores[item["id"]]) == 1
    assert platform.violations == []
    path = urlsplit(item["id"]).path + "/scores"
    assert platform.requests.count(("POST", path)) == 3


# ---- keys, launches and deep linking [SEC 5.1, 5.2, 6; CORE 5.3; DL] -----------------------


def platform_key(platform: Platform, kid: str):
    jwks = requests.get(platform.jwks_url, timeout=5).json()
    jwk = next(k for k in jwks["keys"] if k["kid"] == kid)
    assert jwk["kty"] == "RSA" and jwk["alg"] == "RS256" and "d" not in jwk
    return RSAAlgorithm.from_jwk(jwk)


def verify_id_token(platform: Platform, id_token: str) -> dict:
    kid = jwt.get_unverified_header(id_token)["kid"]
    return jwt.decode(id_token, platform_key(platform, kid), algorithms=["RS256"],
                      audience=platform.client_id, issuer=platform.issuer,
                      options={"require": ["exp", "iat", "sub", "nonce"]})


def test_an_id_token_verifies_and_carries_every_required_claim(platform, other_key):
    claims = verify_id_token(platform, platform.id_token("u1", [LEARNER], nonce="n-1",
                                                         custom={"week": "3"}))
    assert claims["sub"] == "u1" and claims["nonce"] == "n-1"
    assert claims[CLAIM + "message_type"] == "LtiResourceLinkRequest"
    assert claims[CLAIM + "version"] == "1.3.0"
    assert claims[CLAIM + "deployment_id"] == platform.deployment_id
    assert claims[CLAIM + "target_link_uri"] == REDIRECT
    assert claims[CLAIM + "resource_link"]["id"] == DEFAULT_RESOURCE_LINK_ID
    assert claims[CLAIM + "roles"] == [LEARNER]
    assert claims[CLAIM + "context"]["id"] == platform.context["id"]
    assert claims[CLAIM + "custom"] == {"week": "3"}
    assert (claims["name"], claims["given_name"], claims["family_name"], claims["email"]) == \
        ("Ada Lovelace", "Ada", "Lovelace", "ada@example.org")
    assert claims[CLAIM_AGS]["lineitems"] == platform.lineitems_url
    assert SCOPE_SCORE in claims[CLAIM_AGS]["scope"]
    assert claims[CLAIM_NRPS] == {"context_memberships_url": platform.memberships_url,
                                  "service_versions": ["2.0"]}
    with pytest.raises(jwt.InvalidSignatureError):
        verify_id_token(platform, platform.id_token("u1", key=other_key))
    with pytest.raises(jwt.ExpiredSignatureError):
        verify_id_token(platform, platform.id_token("u1", issued_at=time.time() - 900))
    with pytest.raises(jwt.InvalidAudienceError):
        verify_id_token(platform, platform.id_token("u1", audience="another-tool"))


def test_a_launch_goes_through_login_and_authentication(platform):
    url = platform.initiate_login(LOGIN, REDIRECT, "u1", lti_message_hint="hint-1")
    sent = {k: v[0] for k, v in parse_qs(urlsplit(url).query).items()}
    assert url.startswith(LOGIN + "?")
    assert sent == {"iss": platform.issuer, "login_hint": "u1", "target_link_uri": REDIRECT,
                    "lti_message_hint": "hint-1", "client_id": platform.client_id,
                    "lti_deployment_id": platform.deployment_id}
    request = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post",
               "prompt": "none", "client_id": platform.client_id, "redirect_uri": REDIRECT,
               "login_hint": "u1", "lti_message_hint": "hint-1", "state": "s-1",
               "nonce": "nonce-1"}
    page = requests.get(platform.auth_url, params=request, timeout=5)
    assert page.status_code == 200, page.text
    assert f'action="{REDIRECT}"' in page.text and 'value="s-1"' in page.text
    id_token = re.search(r'name="id_token" value="([^"]+)"', page.text).group(1)
    claims = verify_id_token(platform, id_token)
    assert claims["nonce"] == "nonce-1" and claims[CLAIM + "target_link_uri"] == REDIRECT
    assert platform.launches[0]["state"] == "s-1" and platform.violations == []
    # as a form post too
    platform.initiate_login(LOGIN, REDIRECT, "u2", lti_message_hint="hint-2")
    posted = requests.post(platform.auth_url, timeout=5, data=dict(
        request, login_hint="u2", lti_message_hint="hint-2", nonce="nonce-2"))
    assert posted.status_code == 200 and platform.violations == []


@pytest.mark.parametrize(("change", "rule"), [
    ({"redirect_uri": "https://evil.invalid/"}, "redirect_uri"),
    ({"response_mode": "query"}, "response_mode"),
    ({"prompt": "login"}, "prompt"),
    ({"scope": "profile"}, "scope"),
    ({"response_type": "code"}, "response_type"),
    ({"client_id": "other"}, "client_id"),
    ({"login_hint": "u2"}, "login_hint"),
    ({"lti_message_hint": "forged"}, "lti_message_hint"),
    ({"state": ""}, "state"),
    ({"nonce": ""}, "nonce"),
    ({"nonce": "used"}, "nonce used once"),
])
def test_a_bad_authentication_request_is_refused(platform, change, rule):
    platform.initiate_login(LOGIN, REDIRECT, "u1", lti_message_hint="hint-1")
    request = {"scope": "openid", "response_type": "id_token", "response_mode": "form_post",
               "prompt": "none", "client_id": platform.client_id, "redirect_uri": REDIRECT,
               "login_hint": "u1", "lti_message_hint": "hint-1", "state": "s", "nonce": "used"}
    if change.get("nonce") == "used":
        assert requests.get(platform.auth_url, params=request, timeout=5).status_code == 200
    response = requests.get(platform.auth_url, params=dict(request, **change), timeout=5)
    assert response.status_code == 400
    assert len(platform.violations) == 1 and rule in platform.violations[0]


def deep_linking_response(platform: Platform, key, settings: dict, **claims) -> str:
    now = int(time.time())
    payload = {"iss": platform.client_id, "aud": platform.issuer, "iat": now, "exp": now + 300,
               "nonce": str(uuid.uuid4()),
               CLAIM + "message_type": "LtiDeepLinkingResponse", CLAIM + "version": "1.3.0",
               CLAIM + "deployment_id": platform.deployment_id,
               CLAIM_DL_DATA: settings["data"],
               CLAIM_DL_CONTENT_ITEMS: [{"type": "ltiResourceLink", "title": "Notebook 1",
                                         "url": REDIRECT + "?nb=1",
                                         "lineItem": {"scoreMaximum": 10, "label": "NB 1"}}]}
    payload.update(claims)
    return jwt.encode(payload, key, algorithm="RS256", headers={"kid": TOOL_KID})


def test_the_deep_linking_return_verifies_the_response(platform, tool_key, other_key):
    claims = verify_id_token(platform, platform.id_token(
        "i1", [INSTRUCTOR], message_type="LtiDeepLinkingRequest"))
    assert claims[CLAIM + "message_type"] == "LtiDeepLinkingRequest"
    settings = claims[CLAIM_DL_SETTINGS]
    assert settings["deep_link_return_url"] == platform.issuer + "/deep_linking_return"
    assert settings["accept_types"] == ["ltiResourceLink"]
    assert settings["accept_presentation_document_targets"] == ["iframe", "window"]
    assert settings["accept_multiple"] is True
    good = deep_linking_response(platform, tool_key, settings)
    response = requests.post(settings["deep_link_return_url"], data={"JWT": good}, timeout=5)
    assert response.status_code == 200, response.text
    assert [i["title"] for i in platform.deep_links] == ["Notebook 1"]
    assert platform.violations == []
    bad = [
        deep_linking_response(platform, other_key, settings),
        deep_linking_response(platform, tool_key, settings, aud=platform.client_id),
        deep_linking_response(platform, tool_key, settings, iss="other"),
        deep_linking_response(platform, tool_key, settings, nonce=None),
        deep_linking_response(platform, tool_key, settings,
                              **{CLAIM + "message_type": "LtiResourceLinkRequest"}),
        deep_linking_response(platform, tool_key, settings, **{CLAIM_DL_DATA: "forged"}),
        deep_linking_response(platform, tool_key, settings,
                              **{CLAIM_DL_CONTENT_ITEMS: [{"type": "file"}]}),
        deep_linking_response(platform, tool_key, settings, exp=int(time.time()) - 10),
        good,  # its nonce again
    ]
    for token_text in bad:
        refused = requests.post(settings["deep_link_return_url"], data={"JWT": token_text},
                                timeout=5)
        assert refused.status_code == 400, token_text
    assert len(platform.violations) == len(bad)
    assert len(platform.deep_links) == 1


# ---- the server ----------------------------------------------------------------------------


def test_the_tool_keys_may_be_given_to_the_constructor_and_bodies_may_be_chunked(tool_key):
    with Platform(tool_public_jwks=public_jwks(tool_key)) as running:
        running.add_member("u1", "Ada Lovelace")
        access = token(running, tool_key)
        item = create_line_item(running, access)
        body = (b'{"userId": "u1", "timestamp": "2026-11-29T16:00:00Z", ',
                b'"activityProgress": "Completed", "gradingProgress": "NotReady"}')
        response = requests.post(item["id"] + "/scores", data=iter(body), timeout=5,
                                 headers=bearer(access, **{"Content-Type": MEDIA_SCORE}))
        assert response.status_code == 200, response.text
        assert running.scores[item["id"]][0]["gradingProgress"] == "NotReady"
        unknown = requests.get(running.issuer + "/api/v1/courses", timeout=5)
        assert unknown.status_code == 404 and "known endpoint" in running.violations[0]
        assert running.issuer.startswith("http://127.0.0.1:")
        assert running.token_url == running.issuer + "/login/oauth2/token"
        assert running.lineitems_url == running.issuer + "/api/lti/courses/101/line_items"
    with pytest.raises(requests.ConnectionError):
        requests.get(running.jwks_url, timeout=5)
