"""Set a machine up for the class: the exchange, the students' Jupyter configuration, the
local users of the class list.

``python -m hub.classroom setup`` (``make hub`` runs it) creates nbgrader's exchange
(mode 0777, as nbgrader's own release makes it: students write submissions into it, and
the folders inside keep them apart) and writes the configuration each student's
JupyterLab reads (and the Python it runs, :func:`students_python`): nbgrader's course id
and exchange, nbgrader's student tools only
(Assignment List and Validate; the formgrader, course list and assignment creator are
switched off, on the server and in JupyterLab). ``python -m hub.classroom users`` creates
a local user, with a private home, for each member of the class list who has none; their
passwords are the system's (``passwd``, or ``chpasswd`` from a file).
"""

from __future__ import annotations

import json
import os
import pwd
import subprocess
import sys
import sysconfig
from pathlib import Path

from autograder.course.exchange import Exchange
from autograder.proving.catalogue import CATALOGUE

from .settings import HubSettings

NBGRADER_CONFIG = '''\
# Written by hub/classroom.py: every student's nbgrader, on this course's hub.
c = get_config()  # noqa: F821
c.CourseDirectory.course_id = {course_id!r}
c.Exchange.root = {root!r}
'''
# nbgrader's tools a student has no use for, off on the server and in JupyterLab.
SERVER_EXTENSIONS = {"nbgrader.server_extensions.formgrader": False,
                     "nbgrader.server_extensions.course_list": False}
LAB_PLUGINS = {"@jupyter/nbgrader:formgrader": True, "@jupyter/nbgrader:course-list": True,
               "@jupyter/nbgrader:create-assignment": True}


def students_python(settings: HubSettings) -> Path:
    """The Python every student's JupyterLab and kernels run: a virtual environment of the
    system's Python (which every user may run, where the course's own may live in a home
    only its owner reads), of the same version, that sees the course's packages."""
    target = settings.state / "python"
    interpreter = target / "bin" / "python"
    if interpreter.exists():
        return interpreter
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    system = next((Path(p) for p in (f"/usr/bin/python{version}", f"/usr/local/bin/python{version}")
                   if Path(p).exists()), None)
    if system is None:
        raise SystemExit(f"the students' JupyterLab needs Python {version} where every user may "
                         f"run it: apt-get install python{version}")
    subprocess.run([str(system), "-m", "venv", "--without-pip", str(target)], check=True)
    site = Path(sysconfig.get_paths()["purelib"])
    (target / "lib" / f"python{version}" / "site-packages" / "course.pth").write_text(
        f"{site}\n")
    subprocess.run(["chmod", "-R", "a+rX", str(target)], check=True)
    return interpreter


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o644)


def setup(settings: HubSettings) -> None:
    """The exchange and the students' configuration (idempotent)."""
    settings.state.mkdir(parents=True, exist_ok=True)
    settings.state.chmod(0o711)           # students read their configuration, list nothing
    keep_private(settings.course)
    students_python(settings)
    root = settings.exchange.root
    root.mkdir(parents=True, exist_ok=True)
    root.chmod(0o777)
    write_student_config(settings.student_config, settings.exchange)


def write_student_config(config: Path, exchange: Exchange) -> None:
    """Every student's Jupyter configuration, into the folder ``config`` (a folder of
    Jupyter's configuration path): nbgrader's course and exchange, and its tools a student
    has no use for off. The hub of this machine puts it in the hub's state; the students'
    image for Kubernetes in ``/etc/attention-course/jupyter`` (hub/kubernetes/Dockerfile);
    each names it first on ``JUPYTER_CONFIG_PATH``."""
    _write(config / "nbgrader_config.py",
           NBGRADER_CONFIG.format(course_id=exchange.course_id, root=str(exchange.root)))
    _write(config / "jupyter_server_config.json",
           json.dumps({"ServerApp": {"jpserver_extensions": SERVER_EXTENSIONS}}, indent=1))
    _write(config / "labconfig" / "page_config.json",
           json.dumps({"disabledExtensions": LAB_PLUGINS}, indent=1))
    for folder in (config, config / "labconfig"):
        folder.chmod(0o755)


# What only the grader may read on a machine students log in to: the solutions and hidden
# tests, the correct implementations the tests are proven with (the catalogues' variants,
# the independent ones, the repository's history), submissions (and the attempts kept
# where the best grading counts), grades, feedback, reports, the LMS roster and the
# deadlines, the LTI registration, the tool's private key and what the LMS was sent. (The
# course folder itself is not listable, and the grading service creates everything else it
# writes private: it runs with umask 077.) The catalogue of mutants and
# variants is private wherever the grader's code is.
PRIVATE_FOLDERS = ("solutions", "submitted", "attempts", "autograded", "feedback", "reports",
                   "tests", ".git")
PRIVATE_FILES = ("gradebook.db", "lms-roster.json", "deadlines.toml", "nbgrader_config.py",
                 "lti.toml", "lti-private-key.pem", "lti-ledger.json")


def keep_private(course: Path) -> list[Path]:
    """Make the course's secrets readable by their owner only (folders are created if
    missing, so that they are born private); the paths changed."""
    changed = []
    if course.stat().st_mode & 0o066:
        course.chmod(course.stat().st_mode & ~0o066 | 0o711)     # reachable, not listable
        changed.append(course)
    for folder in [course / name for name in PRIVATE_FOLDERS] + [CATALOGUE]:
        folder.mkdir(exist_ok=True)
        if folder.stat().st_mode & 0o077:
            subprocess.run(["chmod", "-R", "go-rwx", str(folder)], check=True)
            changed.append(folder)
    for name in PRIVATE_FILES:
        path = course / name
        if path.exists() and path.stat().st_mode & 0o077:
            path.chmod(0o600)
            changed.append(path)
    return changed


def missing_users(settings: HubSettings) -> list[str]:
    users = []
    for member in settings.members:
        try:
            pwd.getpwnam(member.user)
        except KeyError:
            users.append(member.user)
    return users


def create_users(settings: HubSettings) -> list[str]:
    """A local user, with a home only they can read, for each member who has none."""
    created = []
    for user in missing_users(settings):
        subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash",
                        "--key", "HOME_MODE=0700", user], check=True)
        os.chmod(pwd.getpwnam(user).pw_dir, 0o700)
        created.append(user)
    return created


def main(argv: list[str]) -> int:
    settings = HubSettings.from_environment()
    if argv[:1] == ["setup"]:
        setup(settings)
        print(f"exchange {settings.exchange.root}; "
              f"students' configuration {settings.student_config}")
        missing = missing_users(settings)
        if missing:
            print(f"no local user yet for {', '.join(missing)}: python -m hub.classroom users")
        return 0
    if argv[:1] == ["users"]:
        for user in create_users(settings):
            print(f"created {user}: set a password with `passwd {user}`")
        return 0
    if argv[:1] == ["student-config"] and len(argv) == 2:
        write_student_config(Path(argv[1]), settings.exchange)
        print(f"students' configuration in {argv[1]} (exchange {settings.exchange.root}, "
              f"course {settings.exchange.course_id})")
        return 0
    print("usage: python -m hub.classroom setup|users|student-config FOLDER", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
