"""LTI launches into the hub, without a hub (hub/lti.py): who a launch is (never a guess,
never two people merged, never an instructor the class list does not name), the checks
the library leaves out (deployment, version, message type, azp, a nonce once), and the
deep linking response, verified by the test platform written apart."""

from __future__ import annotations

import json
import time

import jwt
import pytest
import requests
from ltiauthenticator.lti13.error import InvalidAudienceError, ValidationError

from autograder.course import Course
from autograder.lms.lti.keys import ensure_private_key, public_jwks
from autograder.lms.roster import Roster, email_key
from hub.lti import (
    CLAIM,
    CLAIM_DL_SETTINGS,
    NOT_LISTED,
    Nonces,
    Refused,
    check_claims,
    content_item,
    deep_linking_response,
    identify,
    remember_identity,
)
from hub.settings import ClassListError, Member, read_class
from tests.lti.platform import INSTRUCTOR, LEARNER, TEACHING_ASSISTANT, Platform

MEMBERS = [Member("ada", "student"), Member("ben", "student"), Member("dan", "student"),
           Member("cyd", "student", "cyd@school.example"),
           Member("prof", "instructor", "prof@school.example"), Member("tina", "instructor")]


def roster(tmp_path) -> Roster:
    """The course's roster on disk, as the hub reads it."""
    with Roster.updating(Course.at(tmp_path)) as found:
        found.remember("ada", "canvas", "Ada L", ["lti:sub-ada",
                                                  email_key("ada@school.example")])
        found.remember("ben", "canvas", "Ben K", [email_key("Ben@School.example")])
        found.remember("tina", "lti", "Tina T", ["lti:sub-tina"])
        found.remember("zed", "canvas", "Zed Z", ["lti:sub-zed"])     # not on the class list
        found.remember("dan", "canvas", "Dan", ["lti:sub-dan", email_key("dan@school.example")])
    return Roster.of(Course.at(tmp_path))


def claims(sub: str, roles=(LEARNER,), email: str = "") -> dict:
    return {"sub": sub, "email": email, "name": sub, CLAIM + "roles": list(roles)}


def test_a_launch_is_the_student_the_roster_knows(tmp_path):
    found = identify(claims("sub-ada"), MEMBERS, roster(tmp_path))
    assert (found.user, found.role, found.remember) == ("ada", "student", False)


def test_matched_by_email_the_identity_is_remembered(tmp_path):
    known = roster(tmp_path)
    found = identify(claims("sub-ben", email="ben@school.EXAMPLE"), MEMBERS, known)
    assert (found.user, found.remember) == ("ben", True)
    with Roster.updating(Course.at(tmp_path)) as changed:
        remember_identity(changed, found, claims("sub-ben", email="ben@school.example"))
    again = Roster.of(Course.at(tmp_path))
    assert "lti:sub-ben" in again.students["ben"]["keys"]
    assert (again.path.stat().st_mode & 0o777) == 0o600
    assert identify(claims("sub-ben"), MEMBERS, again).user == "ben"     # by sub now
    # ... and by the class list's email, for someone the roster does not have yet.
    assert identify(claims("sub-cyd", email="cyd@school.example"), MEMBERS, known).user == "cyd"


@pytest.mark.parametrize("launch", [
    claims("sub-nobody", email="nobody@school.example"),     # unknown
    claims("sub-nobody"),                                     # no email: never a guess
    claims("sub-zed"),                                        # in the roster, not the class
    # Dan's email, but another LMS user than the one the roster holds for Dan: not merged.
    claims("sub-other", email="dan@school.example"),
])
def test_anyone_else_is_refused(tmp_path, launch):
    assert identify(claims("sub-dan"), MEMBERS, roster(tmp_path)).user == "dan"
    with pytest.raises(Refused) as refused:
        identify(launch, MEMBERS, roster(tmp_path))
    assert refused.value.status_code == 403 and refused.value.jupyterhub_message == NOT_LISTED


def test_never_a_guess(tmp_path):
    """One student on the class list, nobody in the roster: a launch that names neither
    their LTI identity nor their email is still not theirs."""
    empty = Roster(tmp_path / "lms-roster.json")
    for launch in (claims("sub-new", email="new@school.example"), claims("sub-new")):
        with pytest.raises(Refused):
            identify(launch, [Member("solo", "student")], empty)
    assert identify(claims("sub-new", email="solo@school.example"),
                    [Member("solo", "student", "solo@school.example")], empty).user == "solo"


def test_instructors_only_as_the_class_list_names_them(tmp_path):
    known = roster(tmp_path)
    assert identify(claims("sub-tina", [INSTRUCTOR]), MEMBERS, known).role == "instructor"
    ta = identify(claims("sub-prof", [TEACHING_ASSISTANT], "prof@school.example"), MEMBERS,
                  known)
    assert (ta.user, ta.role, ta.remember) == ("prof", "instructor", False)
    deep_linking = {**claims("sub-tina", [INSTRUCTOR]),
                    CLAIM + "message_type": "LtiDeepLinkingRequest"}
    assert identify(deep_linking, MEMBERS, known).user == "tina"
    for launch in (claims("sub-ada", [INSTRUCTOR]),          # a student claiming more
                   {**claims("sub-ada"), CLAIM + "message_type": "LtiDeepLinkingRequest"},
                   claims("sub-tina", [LEARNER]),            # a learner on an instructor's
                   claims("sub-ada", ["http://purl.imsglobal.org/vocab/lis/v2/membership#Mentor"])):
        with pytest.raises(Refused):
            identify(launch, MEMBERS, known)


def test_the_class_list_may_name_emails(tmp_path):
    path = tmp_path / "class.csv"
    path.write_text("user,role,email\nada,student,ada@school.example\nprof,instructor,\n")
    assert read_class(path) == [Member("ada", "student", "ada@school.example"),
                                Member("prof", "instructor", "")]
    path.write_text("user,role,email\nada,student\n")
    with pytest.raises(ClassListError, match="line 2"):
        read_class(path)


def test_the_checks_the_library_leaves_out(tmp_path):
    good = {"azp": "client", "nonce": "n1", CLAIM + "version": "1.3.0",
            CLAIM + "deployment_id": "dep", CLAIM + "message_type": "LtiResourceLinkRequest"}
    check_claims(good, "client", "dep")
    for change, error in (({"azp": "other"}, InvalidAudienceError),
                          ({CLAIM + "version": "1.1"}, ValidationError),
                          ({CLAIM + "deployment_id": "another"}, ValidationError),
                          ({CLAIM + "message_type": "LtiSubmissionReviewRequest"},
                           ValidationError),
                          ({"nonce": ""}, ValidationError)):
        with pytest.raises(error):
            check_claims({**good, **change}, "client", "dep")
    nonces = Nonces(tmp_path / "lti-nonces.json")
    assert nonces.use("n1", time.time() + 300)
    assert not nonces.use("n1", time.time() + 300)
    assert nonces.use("n2", time.time() + 300)
    restarted = Nonces(tmp_path / "lti-nonces.json")       # the hub started again
    assert not restarted.use("n1", time.time() + 300)
    seen = json.loads((tmp_path / "lti-nonces.json").read_text())
    seen["n2"] = time.time() - 1                          # n2's token has expired since
    (tmp_path / "lti-nonces.json").write_text(json.dumps(seen))
    assert restarted.use("n3", time.time() + 300)
    assert set(json.loads((tmp_path / "lti-nonces.json").read_text())) == {"n1", "n3"}


def test_the_deep_linking_response_is_the_platforms_to_verify(tmp_path):
    pem = ensure_private_key(tmp_path / "key.pem")
    with Platform() as lms:
        lms.register_tool(public_jwks(pem), redirect_uris=["http://127.0.0.1:1/cb"])
        token = lms.id_token("prof", [INSTRUCTOR], message_type="LtiDeepLinkingRequest")
        settings = jwt.decode(token, options={"verify_signature": False})[CLAIM_DL_SETTINGS]
        item = content_item("https://hub.example", "attention-scoring", 18.0)
        signed = deep_linking_response(settings, [item], issuer=lms.issuer,
                                       client_id=lms.client_id,
                                       deployment_id=lms.deployment_id, private_pem=pem)
        answer = requests.post(settings["deep_link_return_url"], data={"JWT": signed},
                               timeout=10)
        assert answer.status_code == 200, answer.text
        assert lms.violations == []
        assert lms.deep_links == [item]
        assert item["lineItem"] == {"scoreMaximum": 18.0, "label": "attention-scoring",
                                    "resourceId": "attention-scoring", "tag": "attention-scoring"}
        assert item["url"] == "https://hub.example/hub/lti13/launch?assignment=attention-scoring"
        # Signed with another key, it is the platform that refuses it.
        other = ensure_private_key(tmp_path / "other.pem")
        forged = deep_linking_response(settings, [item], issuer=lms.issuer,
                                       client_id=lms.client_id,
                                       deployment_id=lms.deployment_id, private_pem=other)
        assert requests.post(settings["deep_link_return_url"], data={"JWT": forged},
                             timeout=10).status_code == 400


@pytest.mark.parametrize(("scheme", "extra"), [("https", {"samesite": "None", "secure": True}),
                                               ("http", {})])
def test_the_state_cookies_cross_sites_over_https(scheme, extra):
    """The platform posts the id_token from its own site: over https the hub's state and
    nonce cookies are SameSite=None (and Secure), or the browser would keep them back."""
    from types import SimpleNamespace

    from hub.lti import LoginInitHandler

    set_cookies = []
    handler = SimpleNamespace(
        request=None, authenticator=SimpleNamespace(get_uri_scheme=lambda request: scheme),
        _set_cookie=lambda key, value, **options: set_cookies.append((key, options)))
    LoginInitHandler._set_oauth_cookie(handler, "lti13authenticator-state", "s")
    assert set_cookies == [("lti13authenticator-state", {
        "expires_days": 1, "httponly": True, "encrypted": True, **extra})]
