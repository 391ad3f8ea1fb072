"""The LTI side's parts, alone: the registration file refused whole with the key named, the
tool's key made once and private, the ledger's timestamps and retries, the score a line
item should hold. (Against a platform: ``tests/lti/test_grades_to_the_lms.py``.)"""

from __future__ import annotations

import stat
from datetime import UTC, datetime, timedelta

import jwt
import pytest

from autograder.commands.lti import wanted_score
from autograder.course import Course
from autograder.lms.lti.keys import ensure_private_key, public_jwks
from autograder.lms.lti.ledger import Ledger
from autograder.lms.lti.settings import LtiSettingsError, parse

GOOD = """
[platform]
issuer = "https://canvas.instructure.com"
client_id = "10000000000042"
deployment_id = "7:abc"
token_url = "https://school.instructure.com/login/oauth2/token"
jwks_url = "https://school.instructure.com/api/lti/security/jwks"
auth_login_url = "https://school.instructure.com/api/lti/authorize_redirect"
lineitems_url = "https://school.instructure.com/api/lti/courses/101/line_items"
memberships_url = "https://school.instructure.com/api/lti/courses/101/names_and_roles"

[tool]
private_key = "lti-private-key.pem"
"""


def test_a_good_registration_is_read(tmp_path):
    settings = parse(GOOD, tmp_path)
    assert settings.client_id == "10000000000042"
    assert settings.private_key == tmp_path / "lti-private-key.pem"


@pytest.mark.parametrize(("change", "named"), [
    (lambda t: t.replace('client_id = "10000000000042"\n', ""), "[platform] client_id"),
    (lambda t: t.replace("https://school.instructure.com/login", "http://school.example/login"),
     "[platform] token_url"),
    (lambda t: t + "\n[extra]\nx = 1\n", "[extra]"),
    (lambda t: t.replace("[tool]\n", "[tool]\nsecret = 'x'\n"), "[tool] secret"),
    (lambda t: t.replace('deployment_id = "7:abc"', "deployment_id = 7"),
     "[platform] deployment_id"),
    (lambda t: t.replace("[platform]", "[platform"), "not TOML"),
])
def test_a_bad_registration_is_refused_with_the_key_named(tmp_path, change, named):
    with pytest.raises(LtiSettingsError, match=named.replace("[", r"\[").replace("]", r"\]")):
        parse(change(GOOD), tmp_path)


def test_http_is_allowed_on_loopback_only(tmp_path):
    local = GOOD.replace("https://school.instructure.com", "http://127.0.0.1:8123")
    assert parse(local, tmp_path).token_url.startswith("http://127.0.0.1")


def test_the_tools_key_is_made_once_private_and_signs_what_its_jwks_verifies(tmp_path):
    path = tmp_path / "secret" / "key.pem"
    pem = ensure_private_key(path)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert ensure_private_key(path) == pem                       # not made again
    (jwk,) = public_jwks(pem)["keys"]
    assert jwk["kty"] == "RSA" and jwk["alg"] == "RS256" and jwk["use"] == "sig" and jwk["kid"]
    assert "d" not in jwk                                        # nothing private in it
    token = jwt.encode({"sub": "x"}, pem, algorithm="RS256", headers={"kid": jwk["kid"]})
    public = jwt.PyJWK(jwk).key
    assert jwt.decode(token, public, algorithms=["RS256"])["sub"] == "x"


def test_timestamps_only_grow_per_student_and_line_item(tmp_path):
    ledger = Ledger(tmp_path / "ledger.json")
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    first = ledger.next_timestamp("ada", "a1", now)
    ledger.sent("ada", "a1", "u1", {"timestamp": first})
    again = ledger.next_timestamp("ada", "a1", now - timedelta(hours=1))   # a clock set back
    assert again > first and again.endswith("Z")
    assert ledger.next_timestamp("ben", "a1", now) == first               # another student


def test_a_score_not_taken_is_kept_and_tried_again_later_and_later(tmp_path):
    course = Course.at(tmp_path)
    ledger = Ledger.of(course)
    now = datetime(2026, 11, 29, 12, 0, tzinfo=UTC)
    score = {"timestamp": "2026-11-29T12:00:00.000000Z", "scoreGiven": 3}
    ledger.failed("ada", "a1", "u1", score, "503", now)
    assert not ledger.due("ada", "a1", now + timedelta(seconds=29))
    assert ledger.due("ada", "a1", now + timedelta(seconds=30))
    ledger.failed("ada", "a1", "u1", score, "503", now)
    assert not ledger.due("ada", "a1", now + timedelta(seconds=59))
    ledger.save()
    assert stat.S_IMODE(ledger.path.stat().st_mode) == 0o600
    assert [(s, a) for s, a, _ in Ledger.of(course).undelivered()] == [("ada", "a1")]


def _result(cells: dict, late: dict | None = None, excused: bool = False) -> dict:
    result = {"score": sum(c["score"] for c in cells.values()), "max_score": 18.0,
              "cells": cells}
    if late:
        result["late"] = late
    if excused:
        result["excused"] = True
    return result


def test_the_line_item_holds_pending_manual_until_no_answer_awaits_a_person():
    waiting = _result({"t1": {"score": 14.0, "max_score": 14.0},
                       "w1": {"score": 0.0, "max_score": 4.0, "needs_manual_grade": True}})
    assert wanted_score(waiting) == {"scoreGiven": 14.0, "scoreMaximum": 18.0,
                                     "activityProgress": "Completed",
                                     "gradingProgress": "PendingManual"}
    done = _result({"t1": {"score": 14.0, "max_score": 14.0},
                    "w1": {"score": 3.0, "max_score": 4.0}})
    assert wanted_score(done)["gradingProgress"] == "FullyGraded"
    assert wanted_score(done)["scoreGiven"] == 17.0


def test_the_late_policy_is_applied_and_said_and_an_excused_one_is_not_sent():
    late = _result({"t1": {"score": 14.0, "max_score": 14.0}},
                   late={"days": 2, "credit": 0.8, "final_score": 11.2,
                         "basis": "submitted 2026-11-03T10:00, due 2026-11-01T23:59"})
    score = wanted_score(late)
    assert score["scoreGiven"] == 11.2 and "credit 80%" in score["comment"]
    assert wanted_score(_result({"t1": {"score": 14.0, "max_score": 14.0}},
                                excused=True)) is None
