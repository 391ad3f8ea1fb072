"""A class on the course's JupyterHub, for real: local users log in with their password in
Chromium, fetch the assignment in JupyterLab's Assignment List, submit it there, and read
their own graded feedback there minutes later; the grading service runs under the hub; the
class report is for instructors only; students cannot read each other's work or the
grader's secrets."""

from __future__ import annotations

import json
import shutil
import time
import uuid

import nbformat
import pytest
from playwright.sync_api import Error as PlaywrightError

from autograder.proving.catalogue import implementations
from autograder.proving.diagnosis import hint_of
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli
from tests.hub_server import TEST_ROOT, Student, running_hub
from tests.hub_users import as_user, need_root

# A long proof (real users, real gradings round after round): in make test-full.
pytestmark = [pytest.mark.full, pytest.mark.xdist_group("hub")]


PUT_NOTEBOOK = """async ([url, model]) => {
    const xsrf = document.cookie.split('; ').find(c => c.startsWith('_xsrf=')).split('=')[1];
    const answer = await fetch(url, {method: 'PUT', body: JSON.stringify(model), headers: {
        'X-XSRFToken': decodeURIComponent(xsrf), 'Content-Type': 'application/json'}});
    return answer.status; }"""


def lab(browser, hub, user: str):
    """``user`` logged in through the hub's login page, in their JupyterLab, with the
    Assignment List open (from JupyterLab's Nbgrader menu)."""
    page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", user)
    page.fill("#password_input", hub.password)
    page.click("#login_submit")
    page.wait_for_url(f"**/user/{user}/lab**", timeout=180_000)
    page.wait_for_selector(".jp-LauncherCard", timeout=180_000)
    page.click(".lm-MenuBar-itemLabel:text('Nbgrader')")
    page.click(".lm-Menu-itemLabel:text('Assignment List')")
    page.get_by_role("button", name="Fetch").wait_for(timeout=60_000)
    return page


def work_and_submit(page, user: str, notebook: dict, fetch: bool = True) -> None:
    """Fetch the assignment (unless it is fetched), save the work in it (as JupyterLab
    saves a notebook), submit."""
    if fetch:
        page.get_by_role("button", name="Fetch").click()
    page.get_by_role("button", name="Submit").wait_for(timeout=60_000)
    saved = page.evaluate(PUT_NOTEBOOK, [f"/user/{user}/api/contents/{ASSIGNMENT}/"
                                         f"{ASSIGNMENT}.ipynb",
                                         {"type": "notebook", "format": "json",
                                          "content": notebook}])
    assert saved == 200
    page.get_by_role("button", name="Submit").click()
    page.get_by_role("button", name="Fetch Feedback").wait_for(timeout=60_000)


def feedback_in_the_list(page, hub, timeout: float = 300) -> str:
    """Fetch Feedback until the Assignment List offers "(view feedback)"; the page it opens.

    Each fetch is waited for to its end (the list drawn again) before the list is read or
    anything else is clicked: nbgrader's fetch_feedback rewrites the student's copy of the
    page in place, and a list refreshed while it copies already says "(view feedback)" —
    opened then, or while a second fetch rewrites it, the page is cut short."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        page.get_by_role("button", name="Fetch Feedback", exact=True).first.click()
        page.get_by_role("button", name="Fetching Feedback...", exact=True) \
            .wait_for(state="detached", timeout=120_000)
        link = page.locator("#submitted_assignments_list a", has_text="view feedback")
        if link.count() == 0:          # not there yet: the service is still grading
            time.sleep(3)
            continue
        link.first.click()             # the file browser goes to the feedback's folder …
        entry = page.locator(".jp-DirListing-item", has_text=f"{ASSIGNMENT}.html").first
        entry.wait_for(timeout=60_000)
        entry.dblclick()               # … where the student opens it: JupyterLab's HTML viewer
        return shown_in_the_viewer(page)
    raise AssertionError("no feedback in the Assignment List:\n"
                         + "\n".join(line for line in hub.log.read_text().splitlines()
                                      if "ServerApp" not in line)[-5000:])


def shown_in_the_viewer(page, timeout: float = 60) -> str:
    """The document JupyterLab's HTML viewer shows, once it has settled.

    The viewer renders the file into its frame from a new blob URL each time it updates (when
    the file's model is ready, and again after the model changes or the widget is shown), so
    right after opening, the frame may still be parsing one document or navigating to the
    next: its content is read only once the document is complete and two reads a second
    apart agree."""
    deadline = time.monotonic() + timeout
    viewer = page.locator(".jp-HTMLViewer iframe").last
    viewer.wait_for(timeout=timeout * 1000)
    previous = None
    while time.monotonic() < deadline:
        try:
            frame = viewer.element_handle().content_frame()
            complete = frame.evaluate("document.readyState") == "complete"
            html = frame.content()
        except PlaywrightError:          # navigating to the next rendering, or detached
            previous = None
        else:
            if complete and html == previous:
                return html
            previous = html if complete else None
        time.sleep(1)
    raise AssertionError(f"JupyterLab's HTML viewer never settled in {timeout} s")


def test_a_class_on_the_hub(browser):
    need_root()
    place = TEST_ROOT / f"course-{uuid.uuid4().hex}"     # where students could reach it
    place.mkdir(parents=True, mode=0o755)
    try:
        course = make_course(place / "course")
        # As in this repository: correct implementations and the history are secrets too.
        for secret in ("tests/independent/attention-scoring/variant.py", ".git/objects/ab"):
            (course.root / secret).parent.mkdir(parents=True, exist_ok=True)
            (course.root / secret).write_text("a correct answer")
        _class_on_the_hub(course, browser)
    finally:
        shutil.rmtree(place, ignore_errors=True)


def _class_on_the_hub(course, browser) -> None:
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == "scaled_by_sqrt_n")
    with running_hub(course.root, students=3, instructors=1) as hub:
        published = run_cli(course, "--exchange", str(hub.exchange), "--course-id",
                            hub.course_id, "release", ASSIGNMENT)
        assert published.returncode == 0, published.stderr
        ada, ben, cyd = hub.students
        pages = {user: lab(browser, hub, user) for user in (ada, ben)}
        work_and_submit(pages[ada], ada, json.loads(nbformat.writes(filled(course))))
        work_and_submit(pages[ben], ben, json.loads(nbformat.writes(filled(course, mutant.code))))
        ada_page = feedback_in_the_list(pages[ada], hub)
        ben_page = feedback_in_the_list(pages[ben], hub)
        assert f"{ASSIGNMENT}: 14 / 18" in ada_page and f"<strong>{ada}</strong>" in ada_page
        assert hint_of(mutant) in ben_page and ada not in ben_page
        time.sleep(12)       # two more rounds of the grading service: nothing to grade
        graded = [line for line in hub.log.read_text().splitlines() if line.startswith("graded:")]
        assert len(graded) == 2, graded                    # each submission graded once

        # Cyd sees nobody else's work, on the exchange or in a home, nor the grader's secrets.
        inbound = hub.exchange / hub.course_id / "inbound"
        for private in (inbound, hub.exchange / hub.course_id / "feedback",
                        f"/home/{ada}", f"/home/{ben}/{ASSIGNMENT}",
                        course.submitted / ada, course.autograded, course.feedback,
                        course.source / ASSIGNMENT):
            assert as_user(cyd, "ls", str(private), check=False).returncode != 0
        assert as_user(cyd, "ls", str(course.root), check=False).returncode != 0
        for secret in (course.source / ASSIGNMENT / "hidden_tests.py", course.gradebook_path,
                       course.submitted / ada / ASSIGNMENT / f"{ASSIGNMENT}.ipynb",
                       course.root / "tests/independent/attention-scoring/variant.py",
                       course.root / ".git/objects/ab"):
            assert secret.exists()
            assert as_user(cyd, "head", "-c", "1", str(secret), check=False).returncode != 0

        # The class report: instructors only, by login or by token.
        report = f"{hub.url}/services/class-report/"
        teacher = hub.login(hub.instructors[0])
        index = teacher.get(report, timeout=60)
        assert index.status_code == 200 and ASSIGNMENT in index.text
        page = teacher.get(f"{report}{ASSIGNMENT}", timeout=120)
        assert page.status_code == 200 and ada in page.text and ben in page.text
        assert "script-src" not in page.headers["Content-Security-Policy"]
        student = Student(hub, cyd)
        assert student.session.get(report, timeout=60).status_code == 403
        token = student.session.post(f"{hub.url}/hub/api/users/{cyd}/tokens", json={},
                                     headers={"X-XSRFToken": student.session.cookies.get(
                                         "_xsrf", path="/hub/")}, timeout=30)
        token.raise_for_status()
        refused = student.session.get(report, timeout=60, headers={
            "Authorization": f"token {token.json()['token']}"}, allow_redirects=False)
        assert refused.status_code in (302, 403)
        if refused.status_code == 302:
            assert "oauth" in refused.headers["Location"]
