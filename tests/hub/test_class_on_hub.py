"""A class on the course's JupyterHub, for real: local users log in with their password,
fetch the assignment from the Assignment List, submit it, and read their own graded
feedback minutes later; the grading service runs under the hub; the class report is for
instructors only; students cannot read each other's work."""

from __future__ import annotations

import json
import shutil
import time
import uuid

import nbformat
import pytest

from autograder.proving.catalogue import implementations
from autograder.proving.diagnosis import hint_of
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli
from tests.hub_server import TEST_ROOT, Student, running_hub
from tests.hub_users import as_user, need_root

pytestmark = pytest.mark.xdist_group("hub")


def _feedback(student: Student, timeout: float = 240) -> str:
    """Ask for feedback (the Assignment List's Fetch Feedback) until it arrives."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        listing = student.assignment_list()
        mine = [a for a in listing["value"] if a["assignment_id"] == ASSIGNMENT
                and a["status"] == "submitted"]
        if any(s.get("has_exchange_feedback") for a in mine for s in a.get("submissions", [])):
            student.assignment_list("fetch_feedback", assignment_id=ASSIGNMENT)
            folder = student.contents(f"{ASSIGNMENT}/feedback")["content"]
            stamp = sorted(item["name"] for item in folder)[-1]
            page = student.contents(f"{ASSIGNMENT}/feedback/{stamp}/{ASSIGNMENT}.html")
            return page["content"]
        time.sleep(3)
    import subprocess

    processes = subprocess.run(["ps", "-eo", "pid,etime,args"], capture_output=True,
                               text=True).stdout
    raise AssertionError(f"no feedback for {student.user}; processes:\n"
                         + "\n".join(line[:160] for line in processes.splitlines()
                                      if "autograder" in line)
                         + "\n" + "\n".join(line for line in student.hub.log.read_text()
                                              .splitlines() if "ServerApp" not in line)[-5000:])


def test_a_class_on_the_hub(tmp_path):
    need_root()
    place = TEST_ROOT / f"course-{uuid.uuid4().hex}"     # where students could reach it
    place.mkdir(parents=True, mode=0o755)
    try:
        _class_on_the_hub(make_course(place / "course"))
    finally:
        shutil.rmtree(place, ignore_errors=True)


def _class_on_the_hub(course) -> None:
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == "scaled_by_sqrt_n")
    with running_hub(course.root, students=3, instructors=1) as hub:
        published = run_cli(course, "--exchange", str(hub.exchange), "--course-id",
                            hub.course_id, "release", ASSIGNMENT)
        assert published.returncode == 0, published.stderr
        ada, ben, cyd = (Student(hub, user) for user in hub.students)
        notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        for student, work in ((ada, filled(course)), (ben, filled(course, mutant.code))):
            released = student.assignment_list()["value"]
            assert [a["status"] for a in released if a["assignment_id"] == ASSIGNMENT] == \
                ["released"]
            student.assignment_list("fetch", assignment_id=ASSIGNMENT)
            student.put_notebook(notebook, json.loads(nbformat.writes(work)))
            student.assignment_list("submit", assignment_id=ASSIGNMENT)

        ada_page, ben_page = _feedback(ada), _feedback(ben)
        time.sleep(12)       # two more rounds of the grading service: nothing to grade
        graded = [line for line in hub.log.read_text().splitlines() if line.startswith("graded:")]
        assert len(graded) == 2, graded                    # each submission graded once
        assert f"{ASSIGNMENT}: 14 / 18" in ada_page and f"<strong>{ada.user}</strong>" in ada_page
        assert hint_of(mutant) in ben_page and ada.user not in ben_page

        # Cyd sees nobody else's work, on the exchange or in a home, nor the grader's secrets.
        inbound = hub.exchange / hub.course_id / "inbound"
        for private in (inbound, hub.exchange / hub.course_id / "feedback",
                        f"/home/{ada.user}", f"/home/{ben.user}/{ASSIGNMENT}",
                        course.submitted / ada.user, course.autograded, course.feedback,
                        course.source / ASSIGNMENT):
            assert as_user(cyd.user, "ls", str(private), check=False).returncode != 0
        for secret in (course.source / ASSIGNMENT / "hidden_tests.py", course.gradebook_path,
                       course.submitted / ada.user / ASSIGNMENT / f"{ASSIGNMENT}.ipynb"):
            assert secret.exists()
            assert as_user(cyd.user, "head", "-c", "1", str(secret), check=False).returncode != 0

        # The class report: instructors only, by login or by token.
        report = f"{hub.url}/services/class-report/"
        teacher = hub.login(hub.instructors[0])
        index = teacher.get(report, timeout=60)
        assert index.status_code == 200 and ASSIGNMENT in index.text
        page = teacher.get(f"{report}{ASSIGNMENT}", timeout=120)
        assert page.status_code == 200 and ada.user in page.text and ben.user in page.text
        assert "script-src" not in page.headers["Content-Security-Policy"]
        assert cyd.session.get(report, timeout=60).status_code == 403
        token = cyd.session.post(f"{hub.url}/hub/api/users/{cyd.user}/tokens", json={},
                                 headers={"X-XSRFToken": cyd.session.cookies.get(
                                     "_xsrf", path="/hub/")}, timeout=30)
        token.raise_for_status()
        refused = cyd.session.get(report, timeout=60, headers={
            "Authorization": f"token {token.json()['token']}"}, allow_redirects=False)
        assert refused.status_code in (302, 403)
        if refused.status_code == 302:
            assert "oauth" in refused.headers["Location"]
