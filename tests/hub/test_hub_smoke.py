"""Smoke: the hub starts, a student logs in and gets a JupyterLab of their own."""

from __future__ import annotations

import time

from tests.conftest import make_course
from tests.hub_server import running_hub
from tests.hub_users import need_root


def test_a_student_logs_in_and_gets_their_jupyterlab(tmp_path):
    need_root()
    course = make_course(tmp_path / "course")
    with running_hub(course.root, students=1, instructors=0) as hub:
        (student,) = hub.students
        session = hub.login(student)
        session.post(f"{hub.url}/hub/spawn/{student}", timeout=120,
                     data={"_xsrf": session.cookies.get("_xsrf", "")})
        for _ in range(120):
            lab = session.get(f"{hub.url}/user/{student}/lab", timeout=30)
            if lab.ok and "JupyterLab" in lab.text:
                break
            time.sleep(1)
        assert lab.ok and "JupyterLab" in lab.text, hub.log.read_text()[-3000:]
        status = session.get(f"{hub.url}/user/{student}/api/status", timeout=10)
        assert status.ok, status.text
