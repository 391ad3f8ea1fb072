"""LTI 1.3 launches into the course's hub, end to end: the test platform written apart
(tests/lti/platform.py) plays Canvas; the course's real hub (tests/hub_server.py) has an
``lti.toml`` naming it. A student clicks the course's link in Chromium and is in their own
JupyterLab, at the assignment; an instructor's deep linking puts the course's assignments
in the LMS, verified there; forged, expired, misdirected, replayed and cross-site launches,
someone the class list does not have and a learner on an instructor's account are refused
(4xx, no login)."""

from __future__ import annotations

import json
import pwd
import re
import shutil
import time
import uuid
from contextlib import contextmanager
from html import unescape
from pathlib import Path

import nbformat
import pytest
import requests

from autograder.lms.lti.keys import ensure_private_key, public_jwks
from autograder.lms.roster import Roster, email_key
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli
from tests.hub.test_class_on_hub import work_and_submit
from tests.hub_server import TEST_ROOT, running_hub
from tests.hub_users import as_user, need_root
from tests.lti.platform import INSTRUCTOR, LEARNER, Platform
from tests.lti.test_grades_to_the_lms import SETTINGS as LTI_TOML
from tests.lti.test_grades_to_the_lms import grade_answers_by_hand

# A real hub and Chromium (about 3 min): in make test-full, one hub at a time (the group of
# the class on the hub: two hubs and two browsers side by side failed that test once).
pytestmark = [pytest.mark.full, pytest.mark.xdist_group("hub")]

SESSION = "jupyterhub-session-id"


def start(hub, lms, user_id: str, **launch) -> tuple[requests.Session, dict]:
    """The login initiation as a browser makes it, up to the platform's answer: the session
    (with the hub's state and nonce cookies) and the form the platform would post."""
    session = requests.Session()
    first = session.get(lms.initiate_login(f"{hub.url}/hub/lti13/oauth_login",
                                           f"{hub.url}/hub/lti13/launch", user_id, **launch),
                        allow_redirects=False, timeout=30)
    assert first.status_code == 302 and first.headers["Location"].startswith(lms.auth_url)
    form = session.get(first.headers["Location"], timeout=30)
    assert form.status_code == 200, form.text
    fields = dict(re.findall(r'name="(id_token|state)" value="([^"]*)"', form.text))
    return session, {k: unescape(v) for k, v in fields.items()}


def post(hub, session: requests.Session, fields: dict) -> requests.Response:
    return session.post(f"{hub.url}/hub/lti13/oauth_callback", data=fields,
                        allow_redirects=False, timeout=60)


def violations(lms) -> list[str]:
    """The platform's violations, but Chromium's own request for the platform's icon."""
    return [v for v in lms.violations if "(GET /favicon.ico" not in v]


def refused(answer: requests.Response, session: requests.Session) -> bool:
    return 400 <= answer.status_code < 500 and SESSION not in session.cookies


@contextmanager
def registered_hub(students: int, instructors: int, tls: bool = False):
    """A scratch course registered with the test platform (``lti.toml``, the tool's key) and
    its hub running, the platform knowing the hub's URLs: ``(course, hub, lms)``."""
    need_root()
    place = TEST_ROOT / f"course-{uuid.uuid4().hex}"
    place.mkdir(parents=True, mode=0o755)
    try:
        course = make_course(place / "course")
        pem = ensure_private_key(course.root / "lti-private-key.pem")
        with Platform() as lms:
            (course.root / "lti.toml").write_text(LTI_TOML.format(lms=lms))
            with running_hub(course.root, students=students, instructors=instructors,
                             tls=tls) as hub:
                lms.register_tool(public_jwks(pem),
                                  redirect_uris=[f"{hub.url}/hub/lti13/oauth_callback"],
                                  login_url=f"{hub.url}/hub/lti13/oauth_login")
                yield course, hub, lms
    finally:
        shutil.rmtree(place, ignore_errors=True)


def test_launches_from_the_lms(browser):
    with registered_hub(students=3, instructors=1) as (course, hub, lms):
        _launches(course, hub, lms, browser)


def _launches(course, hub, lms, browser) -> None:
    ada, ben, cyd = hub.students
    prof = hub.instructors[0]
    with Roster.updating(course) as roster:
        roster.remember(ada, "lti", "Ada Lovelace",
                        ["lti:u-ada", email_key("ada@school.example")])
        roster.remember(ben, "canvas", "Ben Kim", [email_key("ben@school.example")])
        roster.remember(prof, "lti", "Pat Prof", ["lti:u-prof"])
    lms.add_member("u-ada", "Ada Lovelace", "ada@school.example")
    lms.add_member("u-ben", "Ben Kim", "ben@school.example")
    lms.add_member("u-prof", "Pat Prof", "prof@school.example", roles=[INSTRUCTOR])
    lms.add_member("u-eve", "Eve Outsider", "eve@elsewhere.example")
    as_user(ada, "mkdir", ASSIGNMENT)             # as the Assignment List's Fetch makes it

    # A student clicks the assignment's link in the LMS: in their JupyterLab, at it.
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(lms.initiate_login(f"{hub.url}/hub/lti13/oauth_login",
                                 f"{hub.url}/hub/lti13/launch?assignment={ASSIGNMENT}", "u-ada",
                                 custom={"assignment": ASSIGNMENT}))
    page.wait_for_url(re.compile(f"^{re.escape(hub.url)}/user/{ada}/lab/tree/{ASSIGNMENT}"),
                      timeout=180_000)
    # JupyterLab's file browser, in the assignment's folder.
    page.locator(".jp-BreadCrumbs-item", has_text=ASSIGNMENT).wait_for(timeout=120_000)
    assert violations(lms) == []

    # Ben, whom the roster knows by email only: his LTI identity is remembered.
    session, fields = start(hub, lms, "u-ben")
    answer = post(hub, session, fields)
    assert answer.status_code == 302
    assert answer.headers["Location"] == f"/hub/spawn/{ben}?next=%2Fuser%2F{ben}%2Flab"
    assert "lti:u-ben" in Roster.of(course).students[ben]["keys"]

    # Replayed: the same post, with the cookies it came with, a second time.
    session, fields = start(hub, lms, "u-ada")
    cookies = session.cookies.copy()
    assert post(hub, session, fields).status_code == 302
    replay = requests.Session()
    replay.cookies.update(cookies)
    assert refused(post(hub, replay, fields), replay)

    # State mismatched: an id_token posted to a browser that did not ask for it.
    session, fields = start(hub, lms, "u-ada")
    assert refused(post(hub, session, {**fields, "state": fields["state"][:-4] + "AAAA"}),
                   session)
    stranger = requests.Session()
    assert refused(post(hub, stranger, fields), stranger)

    # Forged, expired, misdirected: the platform's claims, the hub's nonce, made wrong (and
    # first as they should be: then the same token is taken).
    forger = ensure_private_key(course.root / "forger.pem")
    for wrong in ({}, {"key": forger}, {"issued_at": time.time() - 900},
                  {"audience": "another-tool"}):
        session, fields = start(hub, lms, "u-ada")
        asked = lms.launches[-1]["nonce"]           # the nonce the hub asked for
        token = lms.id_token("u-ada", [LEARNER], nonce=asked,
                             target_link_uri=f"{hub.url}/hub/lti13/launch", **wrong)
        answer = post(hub, session, {"id_token": token, "state": fields["state"]})
        if not wrong:
            assert answer.status_code == 302 and SESSION in session.cookies
        else:
            assert refused(answer, session), (wrong, answer.status_code, answer.text[:300])

    # Nobody the class list has, and a learner on an instructor's account: a page says so.
    session, fields = start(hub, lms, "u-eve")
    answer = post(hub, session, fields)
    assert refused(answer, session) and answer.status_code == 403
    assert "not on this course" in unescape(answer.text)
    session, fields = start(hub, lms, "u-prof", roles=[LEARNER])
    answer = post(hub, session, fields)
    assert refused(answer, session) and answer.status_code == 403
    assert Roster.of(course).owner("lti:u-eve") is None

    # The instructor's deep linking: the assignments chosen, back in the LMS, verified there.
    page = browser.new_context().new_page()
    page.goto(lms.initiate_login(f"{hub.url}/hub/lti13/oauth_login", f"{hub.url}/hub/",
                                 "u-prof", message_type="LtiDeepLinkingRequest"))
    page.wait_for_selector("#deep-link-submit", timeout=60_000)
    assert page.locator(f"input[value='{ASSIGNMENT}']").is_checked()
    page.click("#deep-link-submit")
    page.wait_for_selector("text=1 item(s) received", timeout=60_000)
    assert violations(lms) == []
    assert [(item["custom"], item["lineItem"]["tag"], item["lineItem"]["resourceId"])
            for item in lms.deep_links] == [({"assignment": ASSIGNMENT}, ASSIGNMENT, ASSIGNMENT)]
    assert lms.deep_links[0]["lineItem"]["scoreMaximum"] > 1
    assert lms.deep_links[0]["url"] == f"{hub.url}/hub/lti13/launch?assignment={ASSIGNMENT}"
    # ... and the instructor is logged in as the instructor, who may open the class report.
    report = page.goto(f"{hub.url}/services/class-report/")
    assert report.status == 200 and f"/user/{prof}" not in page.url

    # A student's deep linking is refused; the hub's own login is still there.
    session, fields = start(hub, lms, "u-ada", message_type="LtiDeepLinkingRequest")
    assert refused(post(hub, session, fields), session)
    assert hub.login(cyd).get(f"{hub.url}/hub/home", timeout=30).ok
    assert violations(lms) == []


def test_a_launched_students_grade_reaches_the_lms_pending_then_final(browser, tmp_path):
    """End to end: Ada clicks the assignment's link in the LMS and is in her JupyterLab, in
    the assignment, fetched for her; she works and submits in the Assignment List; the hub's
    grading service grades it and the LMS's line item gets her score, pending while her
    written answers await a person; once a person grades them, the final score follows by
    itself."""
    with registered_hub(students=1, instructors=1) as (course, hub, lms):
        published = run_cli(course, "--exchange", str(hub.exchange), "--course-id",
                            hub.course_id, "release", ASSIGNMENT)
        assert published.returncode == 0, published.stderr
        (ada,) = hub.students
        with Roster.updating(course) as roster:
            roster.remember(ada, "canvas", "Ada Lovelace",
                            [email_key("ada@school.example")])
        lms.add_member("u-ada", "Ada Lovelace", "ada@school.example")

        page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
        page.goto(lms.initiate_login(f"{hub.url}/hub/lti13/oauth_login",
                                     f"{hub.url}/hub/lti13/launch?assignment={ASSIGNMENT}",
                                     "u-ada", custom={"assignment": ASSIGNMENT}))
        # The LMS's item opens the assignment: fetched for her, as her, on arrival.
        page.wait_for_url(re.compile(
            f"^{re.escape(hub.url)}/user/{ada}/lab/tree/{ASSIGNMENT}"), timeout=180_000)
        page.locator(".jp-DirListing-item", has_text=f"{ASSIGNMENT}.ipynb") \
            .first.wait_for(timeout=120_000)
        fetched = Path(pwd.getpwnam(ada).pw_dir) / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"
        assert fetched.stat().st_uid == pwd.getpwnam(ada).pw_uid
        page.click(".lm-MenuBar-itemLabel:text('Nbgrader')")
        page.click(".lm-Menu-itemLabel:text('Assignment List')")
        page.get_by_role("button", name="Submit").wait_for(timeout=60_000)
        work_and_submit(page, ada, json.loads(nbformat.writes(filled(course))),
                        fetch=False)

        pending = _score_at_the_lms(lms, "u-ada", "PendingManual", hub)
        assert (pending["scoreGiven"], pending["scoreMaximum"]) == (14, 18)

        grade_answers_by_hand(course, tmp_path)
        final = _score_at_the_lms(lms, "u-ada", "FullyGraded", hub)
        assert (final["scoreGiven"], final["scoreMaximum"]) == (18, 18)
        (item,) = lms.line_items.values()
        assert item["tag"] == ASSIGNMENT
        assert lms.result(item["id"], "u-ada")["resultScore"] == 18
        assert violations(lms) == []


def _score_at_the_lms(lms, user: str, progress: str, hub, timeout: float = 300) -> dict:
    """The first score with ``progress`` the platform received for ``user``."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for scores in list(lms.scores.values()):
            for score in scores:
                if score["userId"] == user and score["gradingProgress"] == progress:
                    return score
        time.sleep(2)
    raise AssertionError(f"no {progress} score for {user} at the LMS:\n"
                         + "\n".join(line for line in hub.log.read_text().splitlines()
                                     if "ServerApp" not in line)[-4000:])


def test_a_launch_from_another_site_over_https(browser):
    """As a real LMS launches: the platform on a site of its own (``http://127.0.0.1``) and
    the hub over https on another (``https://localhost``). The platform posts the id_token
    back across sites: the student arrives in JupyterLab, and the hub's state and nonce
    cookies say ``SameSite=None; Secure`` — without it, a browser sends them with a
    cross-site post only by grace (Chromium: in the cookie's first two minutes, its Lax+POST
    allowance; Firefox and Safari: not at all), so the attributes are asserted, not only
    the arrival (a hub that left them out got in here, and failed the assertion)."""
    with registered_hub(students=1, instructors=1, tls=True) as (course, hub, lms):
        assert hub.url.startswith("https://localhost:")
        (ada,) = hub.students
        with Roster.updating(course) as roster:
            roster.remember(ada, "lti", "Ada Lovelace", ["lti:u-ada"])
        lms.add_member("u-ada", "Ada Lovelace", "ada@school.example")

        page = browser.new_context(ignore_https_errors=True).new_page()
        set_by_login: list[str] = []
        page.on("response", lambda answer: set_by_login.extend(
            h["value"] for h in answer.headers_array() if h["name"].lower() ==
            "set-cookie") if "/hub/lti13/oauth_login" in answer.url else None)
        page.goto(lms.initiate_login(f"{hub.url}/hub/lti13/oauth_login",
                                     f"{hub.url}/hub/lti13/launch", "u-ada"))
        page.wait_for_url(re.compile(f"^{re.escape(hub.url)}/user/{ada}/lab"),
                          timeout=180_000)
        page.wait_for_selector(".jp-LauncherCard", timeout=180_000)
        assert set_by_login, "the login initiation set no cookie"
        for cookie in set_by_login:
            attributes = {part.strip().lower() for part in cookie.split(";")}
            assert {"samesite=none", "secure", "httponly"} <= attributes, cookie
        assert violations(lms) == []
