"""Grades flow back into the LMS's gradebook by themselves (LTI 1.3 AGS), checked by a
platform written apart from the tool that refuses whatever the specifications forbid
(:mod:`tests.lti.platform`): a graded submission's line item holds its score, pending while
an answer awaits a person and final once graded by hand; a refused post is kept and sent
again; a deleted line item is made again and ``export --lti-sync`` sends what the LMS lacks;
the class list (NRPS) makes known the students who never handed in."""

from __future__ import annotations

import asyncio
import csv
import json
import shutil
import threading
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta

import pytest
import requests
from tornado.httpserver import HTTPServer
from tornado.netutil import bind_sockets

from autograder.classview.app import application
from autograder.commands.grade import grade
from autograder.commands.lti import platform_for, sync
from autograder.commands.serve import grades_to_the_lms
from autograder.course import Course
from autograder.lms.lti.keys import ensure_private_key, public_jwks
from autograder.lms.lti.ledger import Ledger
from autograder.lms.lti.settings import load
from autograder.lms.roster import Roster, email_key, lti_key
from autograder.proving.catalogue import implementations
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli, submit
from tests.lti.platform import INSTRUCTOR, Platform

pytestmark = pytest.mark.xdist_group("lti")

SETTINGS = """
[platform]
issuer = "{lms.issuer}"
client_id = "{lms.client_id}"
deployment_id = "{lms.deployment_id}"
token_url = "{lms.token_url}"
jwks_url = "{lms.jwks_url}"
auth_login_url = "{lms.auth_url}"
lineitems_url = "{lms.lineitems_url}"
memberships_url = "{lms.memberships_url}"

[tool]
private_key = "lti-private-key.pem"
"""


@pytest.fixture(scope="module")
def graded_course(tmp_path_factory):
    """Ada's notebook is right, Ben's has a catalogued mistake; both graded, their written
    answers not yet; both known to the course by the e-mail the LMS's files gave."""
    course = make_course(tmp_path_factory.mktemp("lti") / "course")
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == "scaled_by_sqrt_n")
    submit(course, "ada", filled(course))
    submit(course, "ben", filled(course, mutant.code))
    grade(course, jobs=2, progress=False)
    with Roster.updating(course) as roster:
        for student in ("ada", "ben"):
            roster.remember(student, "canvas", student.title(),
                            [email_key(f"{student}@school.edu")], f"{student}@school.edu")
    return course


def _scores(lms: Platform) -> list[tuple[str, float, str]]:
    return [(s["userId"], s.get("scoreGiven"), s["gradingProgress"])
            for scores in lms.scores.values() for s in scores]


def grade_answers_by_hand(course, tmp_path) -> None:
    """Every answer graded by hand at full marks, through `manual --export/--import`."""
    sheet = tmp_path / "hand.csv"
    assert run_cli(course, "manual", ASSIGNMENT, "--export", str(sheet)).returncode == 0
    with sheet.open(newline="") as handle:
        rows = list(csv.DictReader(handle))
    for row in rows:
        row["score"] = row["max_score"]
    with sheet.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    assert run_cli(course, "manual", ASSIGNMENT, "--import", str(sheet)).returncode == 0


@pytest.fixture
def course(graded_course, tmp_path):
    """A copy of the graded course of this test's own (its gradebook, roster, ledger)."""
    return Course.at(shutil.copytree(graded_course.root, tmp_path / "course"))


def test_grades_reach_their_line_items_pending_then_final(course, tmp_path):
    pem = ensure_private_key(course.root / "lti-private-key.pem")
    with Platform() as lms:
        lms.register_tool(public_jwks(pem))
        lms.add_member("5a1f-ada", "Ada Lovelace", "ADA@school.edu")
        lms.add_member("77b2-ben", "Ben Okri", "ben@school.edu")
        lms.add_member("9c3d-cyd", "Cyd Charisse", "cyd@school.edu")      # never handed in
        lms.add_member("0e4f-prof", "Pat Prof", "prof@school.edu", roles=[INSTRUCTOR])
        (course.root / "lti.toml").write_text(SETTINGS.format(lms=lms))
        platform = platform_for(load(course))

        first = sync(course, platform)
        assert len(lms.line_items) == 1
        (item,) = lms.line_items.values()
        assert item["tag"] == ASSIGNMENT and item["scoreMaximum"] == 18
        given = dict((user, (score, progress)) for user, score, progress in _scores(lms))
        assert given["5a1f-ada"] == (14.0, "PendingManual")
        assert given["77b2-ben"][0] < 14 and given["77b2-ben"][1] == "PendingManual"
        assert len(first.sent) == 2 and not first.kept
        roster = Roster.of(course)
        assert lti_key("5a1f-ada") in roster.students["ada"]["keys"]      # matched, not added
        assert any(lti_key("9c3d-cyd") in entry["keys"] for entry in roster.students.values())
        assert not any(lti_key("0e4f-prof") in entry["keys"]
                       for entry in roster.students.values())

        assert sync(course, platform).sent == []                 # nothing changed: nothing sent

        grade_answers_by_hand(course, tmp_path)
        lms.fail_next(1, 503, path_contains="/scores")
        now = datetime.now(UTC)
        refused = sync(course, platform, now=now)
        assert len(refused.kept) == 1 and len(refused.sent) == 1
        assert len(Ledger.of(course).undelivered()) == 1
        assert sync(course, platform, now=now + timedelta(seconds=5)).sent == []   # waits
        again = sync(course, platform, now=now + timedelta(seconds=31))
        assert len(again.sent) == 1 and not Ledger.of(course).undelivered()
        assert lms.result(item["id"], "5a1f-ada")["resultScore"] == 18.0
        final = {user: progress for user, _, progress in _scores(lms)[-2:]}
        assert set(final.values()) == {"FullyGraded"}

        # An instructor deletes the column in the LMS: export --lti-sync makes it again and
        # sends every grade it lacks.
        lms.delete_line_item(item["id"])
        synced = run_cli(course, "export", "--lti-sync")
        assert synced.returncode == 0, synced.stdout + synced.stderr
        assert "2 sent" in synced.stdout
        (new_item,) = lms.line_items.values()
        assert new_item["id"] != item["id"]
        assert lms.result(new_item["id"], "77b2-ben")["resultMaximum"] == 18.0
        # The one request refused: the results of the deleted line item (the tool could not
        # know; it then found the item gone and made it again). Nothing else broke a rule.
        assert [v for v in lms.violations if "/results -> 404" not in v
                or item["id"] not in v] == [], lms.violations
        assert len(lms.violations) == 1


def test_the_service_sends_grades_after_a_round_and_never_stops_for_the_lms(course):
    """``serve``'s step after each round: the grades sent; an LMS that is down, or a
    registration that cannot be read, is a line in the log — the round goes on."""
    (course.root / "lti.toml").write_text(SETTINGS.format(lms=_closed_platform()))
    down = grades_to_the_lms(course, [ASSIGNMENT])
    assert down and all(line.startswith("kept, to send again:") or "class list" in line
                        for line in down), down
    (course.root / "lti.toml").write_text("[platform\n")
    assert grades_to_the_lms(course, [ASSIGNMENT])[0].startswith("LTI: lti.toml: not TOML")
    pem = ensure_private_key(course.root / "lti-private-key.pem")
    with Platform() as lms:
        lms.register_tool(public_jwks(pem))
        lms.add_member("5a1f-ada", "Ada Lovelace", "ada@school.edu")
        (course.root / "lti.toml").write_text(SETTINGS.format(lms=lms))
        sent = grades_to_the_lms(course, [ASSIGNMENT])
        assert sent == [f"sent to the LMS: ada {ASSIGNMENT} 14 / 18 PendingManual"], sent
        assert lms.violations == []


def _closed_platform() -> Platform:
    """The URLs of a platform that is no longer there (its port closed)."""
    with Platform() as lms:
        return lms


def test_without_a_registration_export_lti_sync_says_so(tmp_path):
    course = make_course(tmp_path / "course")
    done = run_cli(course, "export", "--lti-sync")
    assert done.returncode == 2 and "lti.toml" in done.stderr


def test_lti_keys_prints_the_public_key_set_only(tmp_path):
    course = make_course(tmp_path / "course")
    with Platform() as lms:
        (course.root / "lti.toml").write_text(SETTINGS.format(lms=lms))
    done = run_cli(course, "lti", "keys")
    assert done.returncode == 0, done.stderr
    (jwk,) = json.loads(done.stdout)["keys"]
    assert jwk["kty"] == "RSA" and "d" not in jwk and "p" not in jwk
    assert (course.root / "lti-private-key.pem").exists()


@contextmanager
def serving(app):
    """The Tornado application ``app`` served on loopback from a thread and an event loop of
    its own (this thread's may be a browser driver's); yields its base URL."""
    sockets = bind_sockets(0, "127.0.0.1")
    loop = asyncio.new_event_loop()
    started = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)

        async def start() -> None:
            HTTPServer(app).add_sockets(sockets)

        loop.run_until_complete(start())
        started.set()
        loop.run_forever()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    started.wait(30)
    try:
        yield f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
    finally:
        loop.call_soon_threadsafe(loop.stop)
        thread.join(30)
        for sock in sockets:
            sock.close()


def test_the_key_set_is_served_to_the_lms_without_a_login(tmp_path):
    """The class-report service serves the tool's public key set to the LMS, without a
    login (a platform fetches it so), and nothing where the course has no registration."""
    course = make_course(tmp_path / "course")
    with serving(application(course, None, "/services/class-report/")) as url:
        address = f"{url}/services/class-report/lti/jwks.json"
        assert requests.get(address, timeout=30).status_code == 404
        with Platform() as lms:
            (course.root / "lti.toml").write_text(SETTINGS.format(lms=lms))
        served = requests.get(address, timeout=30)
        assert served.status_code == 200
        (jwk,) = served.json()["keys"]
        pem = (course.root / "lti-private-key.pem").read_text()
        assert jwk == public_jwks(pem)["keys"][0] and "d" not in jwk
