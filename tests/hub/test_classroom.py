"""The machine's hub (``python -m hub.classroom``): what it writes for students, and what
it keeps from them."""

from __future__ import annotations

from tests.conftest import REPO

KUBERNETES = REPO / "hub" / "kubernetes"


def test_the_students_image_gets_the_configuration_a_student_gets_on_one_machine(tmp_path):
    """The Dockerfile writes every student's Jupyter configuration with the command the
    machine's hub uses: nbgrader's exchange, and no formgrader, course list or creator."""
    import json
    import subprocess
    import sys

    from hub.classroom import LAB_PLUGINS, SERVER_EXTENSIONS

    written = subprocess.run(
        [sys.executable, "-m", "hub.classroom", "student-config", str(tmp_path / "jupyter")],
        cwd=REPO, capture_output=True, text=True, check=False,
        env={"PATH": "/usr/bin:/bin", "AUTOGRADER_EXCHANGE": "/srv/nbgrader/exchange",
             "AUTOGRADER_COURSE_ID": "attention-nlp"})
    assert written.returncode == 0, written.stderr
    config = tmp_path / "jupyter"
    assert "c.Exchange.root = '/srv/nbgrader/exchange'" in \
        (config / "nbgrader_config.py").read_text()
    server = json.loads((config / "jupyter_server_config.json").read_text())
    assert server["ServerApp"]["jpserver_extensions"] == SERVER_EXTENSIONS
    assert not any(SERVER_EXTENSIONS.values())
    lab = json.loads((config / "labconfig" / "page_config.json").read_text())
    assert lab["disabledExtensions"] == LAB_PLUGINS
    dockerfile = (KUBERNETES / "Dockerfile").read_text()
    assert "python -m hub.classroom student-config /opt/student-jupyter" in dockerfile
    assert "ENV JUPYTER_CONFIG_PATH=/etc/attention-course/jupyter" in dockerfile


def test_on_one_machine_the_course_s_secrets_are_its_owner_s_alone(tmp_path, monkeypatch):
    """``python -m hub.classroom setup`` makes the course's secrets readable by their owner
    only: its folders (created private if missing), its files, and the catalogue of mutants
    and variants wherever the grader's code is."""
    from hub import classroom

    course, catalogue = tmp_path / "course", tmp_path / "code" / "mutants_and_variants"
    (course / "solutions" / "attention-scoring").mkdir(parents=True)
    (course / "solutions" / "attention-scoring" / "attention-scoring.ipynb").write_text("{}")
    (course / "gradebook.db").write_text("")
    catalogue.mkdir(parents=True)
    (catalogue / "mutant.py").write_text("")
    for path in (course, course / "solutions", catalogue):
        path.chmod(0o755)
    monkeypatch.setattr(classroom, "CATALOGUE", catalogue)
    changed = classroom.keep_private(course)
    assert catalogue in changed and course / "solutions" in changed
    assert course.stat().st_mode & 0o777 == 0o711            # reachable, not listable
    for private in [course / name for name in classroom.PRIVATE_FOLDERS] + [
            catalogue, catalogue / "mutant.py", course / "gradebook.db",
            course / "solutions" / "attention-scoring" / "attention-scoring.ipynb"]:
        assert private.stat().st_mode & 0o077 == 0, private
    assert classroom.keep_private(course) == []               # once is enough
