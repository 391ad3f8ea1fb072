"""Where the hub keeps things and listens, from the environment, named once.

=====================  ===============================================  ===================
variable               what                                             default
=====================  ===============================================  ===================
``HUB_STATE``          the hub's own files: its database, cookie secret,  ``.hub`` in the
                       the students' Jupyter configuration              course
``HUB_PORT``           the port students open                           8000
``HUB_IP``             the address it listens on (0.0.0.0: every        127.0.0.1
                       network of the machine; with TLS only)
``HUB_COURSE``         the course directory the grading service grades  the repository
``AUTOGRADER_EXCHANGE``  nbgrader's exchange                            /srv/nbgrader/exchange
``AUTOGRADER_COURSE_ID``  the course's id in it                         attention-nlp
``HUB_CLASS``          the class list: ``user,role[,email]`` per line   ``hub/class.csv``
``HUB_TLS_CERT``,      the hub's certificate and key (PEM): https at    none: http (put a
``HUB_TLS_KEY``        the address students open, as an LMS's launches  TLS proxy in front)
                       need
=====================  ===============================================  ===================

The hub's internal API, the proxy's API and the instructors' view of the grading service
take the next three ports.
"""

from __future__ import annotations

import csv
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from autograder.course import Course
from autograder.course.exchange import DEFAULT_COURSE_ID, Exchange
from autograder.lms.lti.settings import LtiSettings, load

REPOSITORY = Path(__file__).resolve().parent.parent
STUDENT, INSTRUCTOR = "student", "instructor"
ROLES = (STUDENT, INSTRUCTOR)


class ClassListError(ValueError):
    """A class list that cannot be used: refused whole, with the line named."""


@dataclass(frozen=True)
class Member:
    user: str
    role: str
    email: str = ""       # optional: how an LTI launch without a roster entry finds them


def read_class(path: Path) -> list[Member]:
    """The class list: a CSV file with the header ``user,role`` (role: student or
    instructor), or ``user,role,email`` (the email an LTI launch may name them by). A user
    name must be a valid local user name; a repeated user, an unknown
    role or a bad name refuses the whole file, naming the line."""
    import re

    valid = re.compile(r"^[a-z_][a-z0-9_-]{0,31}$")
    members, seen = [], set()
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.reader(handle))
    header = [h.strip() for h in rows[0]] if rows else []
    if header not in (["user", "role"], ["user", "role", "email"]):
        raise ClassListError(f"{path}, line 1: the header must be user,role or "
                             "user,role,email")
    for line, row in enumerate(rows[1:], start=2):
        if not any(cell.strip() for cell in row):
            continue
        if len(row) != len(header):
            raise ClassListError(f"{path}, line {line}: {len(header)} cells, "
                                 f"{', '.join(header)}")
        user, role = row[0].strip(), row[1].strip()
        email = row[2].strip() if len(row) == 3 else ""
        if not valid.match(user):
            raise ClassListError(f"{path}, line {line}: {user!r} is not a local user name "
                                 "(lower-case letters, digits, - and _; at most 32)")
        if role not in ROLES:
            raise ClassListError(f"{path}, line {line}: role {role!r} is not one of {ROLES}")
        if user in seen:
            raise ClassListError(f"{path}, line {line}: {user} is listed twice")
        seen.add(user)
        members.append(Member(user, role, email))
    return members


@dataclass(frozen=True)
class HubSettings:
    state: Path
    port: int
    course: Path
    exchange: Exchange
    class_list: Path
    members: list[Member] = field(default_factory=list)
    tls: tuple[Path, Path] | None = None       # (certificate, key)
    ip: str = "127.0.0.1"

    @classmethod
    def from_environment(cls) -> HubSettings:
        course = Path(os.environ.get("HUB_COURSE", REPOSITORY)).resolve()
        exchange = Exchange.named(os.environ.get("AUTOGRADER_EXCHANGE",
                                                 "/srv/nbgrader/exchange"),
                                  os.environ.get("AUTOGRADER_COURSE_ID", DEFAULT_COURSE_ID))
        class_list = Path(os.environ.get("HUB_CLASS", REPOSITORY / "hub" / "class.csv"))
        certificate, key = os.environ.get("HUB_TLS_CERT"), os.environ.get("HUB_TLS_KEY")
        if bool(certificate) != bool(key):
            raise SystemExit("HUB_TLS_CERT and HUB_TLS_KEY go together: set both or neither")
        ip = os.environ.get("HUB_IP", "127.0.0.1")
        if ip != "127.0.0.1" and not certificate:
            raise SystemExit(f"HUB_IP={ip} opens the hub to a network: only with TLS "
                             "(HUB_TLS_CERT, HUB_TLS_KEY), passwords never travel in clear")
        return cls(Path(os.environ.get("HUB_STATE", course / ".hub")).resolve(),
                   int(os.environ.get("HUB_PORT", "8000")), course, exchange, class_list,
                   read_class(class_list) if class_list.exists() else [],
                   (Path(certificate), Path(key)) if certificate and key else None, ip)

    @property
    def lti(self) -> LtiSettings | None:
        """The course's LTI 1.3 registration (``lti.toml``), if it has one: launches on."""
        return load(Course.at(self.course))

    @property
    def hub_api_port(self) -> int:
        return self.port + 1

    @property
    def proxy_api_port(self) -> int:
        return self.port + 2

    @property
    def service_port(self) -> int:
        return self.port + 3

    @property
    def students(self) -> list[str]:
        return [m.user for m in self.members if m.role == STUDENT]

    @property
    def instructors(self) -> list[str]:
        return [m.user for m in self.members if m.role == INSTRUCTOR]

    @property
    def student_config(self) -> Path:
        """The Jupyter configuration every student's server reads (JUPYTER_CONFIG_PATH)."""
        return self.state / "student-jupyter"

    @property
    def python(self) -> Path:
        """The Python of the hub and its services (the course's)."""
        return Path(sys.executable)

    @property
    def students_python(self) -> Path:
        """The Python of the students' JupyterLab (hub/classroom.py makes it)."""
        return self.state / "python" / "bin" / "python"

    @property
    def proxy(self) -> Path:
        return REPOSITORY / ".tools" / "node_modules" / ".bin" / "configurable-http-proxy"
