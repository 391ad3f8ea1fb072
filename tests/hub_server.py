"""The course's JupyterHub, started for a test on loopback: hub/jupyterhub_config.py as
``make hub`` runs it, with a class of real local users, a scratch course and exchange."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import uuid
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests

from tests.hub_users import local_users

REPO = Path(__file__).resolve().parent.parent
TEST_ROOT = Path("/srv/attention-course-tests")     # reachable by the class's users


def free_ports(count: int) -> int:
    """The first of ``count`` consecutive free ports on 127.0.0.1."""
    for first in range(21000 + os.getpid() % 200 * 40, 60000, 7):
        sockets = []
        try:
            for port in range(first, first + count):
                s = socket.socket()
                s.bind(("127.0.0.1", port))
                sockets.append(s)
            return first
        except OSError:
            continue
        finally:
            for s in sockets:
                s.close()
    raise RuntimeError("no free ports")


def self_signed(folder: Path, host: str) -> tuple[Path, Path]:
    """A certificate for ``host`` signed by its own key, valid a day: (certificate, key)."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, host)])
    now = datetime.now(UTC)
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
                   .public_key(key.public_key()).serial_number(x509.random_serial_number())
                   .not_valid_before(now - timedelta(minutes=5))
                   .not_valid_after(now + timedelta(days=1))
                   .add_extension(x509.SubjectAlternativeName([x509.DNSName(host)]),
                                  critical=False)
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None),
                                  critical=True)
                   .sign(key, hashes.SHA256()))
    certificate_path, key_path = folder / "hub-cert.pem", folder / "hub-key.pem"
    certificate_path.write_bytes(certificate.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    key_path.chmod(0o600)
    return certificate_path, key_path


@dataclass
class Hub:
    url: str
    students: list[str]
    instructors: list[str]
    password: str
    exchange: Path
    course_id: str
    log: Path
    verify: str | bool = True      # what requests trusts: the test's certificate, with TLS

    def login(self, user: str) -> requests.Session:
        """A browser-like session of ``user``, logged in through the hub's login form."""
        session = requests.Session()
        session.verify = self.verify
        session.get(f"{self.url}/hub/login", timeout=30)
        answer = session.post(f"{self.url}/hub/login?next=", timeout=60,
                              data={"username": user, "password": self.password,
                                    "_xsrf": session.cookies.get("_xsrf", "")})
        answer.raise_for_status()
        assert "jupyterhub-session-id" in session.cookies, answer.text[:300]
        return session


class Student:
    """A user logged in to the hub with their own JupyterLab started, acting as its pages
    do: the contents API, and the Assignment List's calls to nbgrader's server extension."""

    def __init__(self, hub: Hub, user: str) -> None:
        self.hub, self.user = hub, user
        self.session = hub.login(user)
        self.base = f"{hub.url}/user/{user}"
        self.session.post(f"{hub.url}/hub/spawn/{user}", timeout=120,
                          data={"_xsrf": self.session.cookies.get("_xsrf", path="/hub/")})
        deadline = time.monotonic() + 150
        while True:
            lab = self.session.get(f"{self.base}/lab", timeout=30)
            if lab.ok and "JupyterLab" in lab.text:
                break
            if time.monotonic() > deadline:
                raise AssertionError(f"{user}'s JupyterLab did not start:\n"
                                     f"{hub.log.read_text()[-3000:]}")
            time.sleep(1)

    def _xsrf(self) -> dict:
        return {"X-XSRFToken": self.session.cookies.get("_xsrf", path=f"/user/{self.user}/")}

    def assignment_list(self, action: str = "", **data) -> dict:
        """nbgrader's Assignment List: the listing, or fetch / submit / fetch_feedback."""
        if not action:
            answer = self.session.get(f"{self.base}/assignments", timeout=120,
                                      params={"course_id": self.hub.course_id})
        else:
            answer = self.session.post(f"{self.base}/assignments/{action}", timeout=300,
                                       headers=self._xsrf(),
                                       data={"course_id": self.hub.course_id, **data})
        answer.raise_for_status()
        result = answer.json()
        assert result.get("success", True), result
        return result

    def put_notebook(self, path: str, notebook: dict) -> None:
        answer = self.session.put(f"{self.base}/api/contents/{path}", headers=self._xsrf(),
                                  json={"type": "notebook", "format": "json",
                                        "content": notebook}, timeout=60)
        answer.raise_for_status()

    def contents(self, path: str) -> dict:
        answer = self.session.get(f"{self.base}/api/contents/{path}", timeout=60,
                                  params={"content": 1})
        answer.raise_for_status()
        return answer.json()


@contextmanager
def running_hub(course_root: Path, students: int = 3, instructors: int = 1,
                course_id: str = "attention-nlp", tls: bool = False):
    """The course's hub on loopback with ``students`` and ``instructors`` as local users;
    with ``tls``, over https at ``https://localhost:<port>`` (a certificate made for the
    test: another site than the ``127.0.0.1`` of a test LMS, as a real LMS is)."""
    place = TEST_ROOT / uuid.uuid4().hex
    place.mkdir(parents=True)
    for folder in (TEST_ROOT, place):
        folder.chmod(0o755)
    password = uuid.uuid4().hex
    with local_users(students + instructors, prefix="hub") as users:
        subprocess.run(["chpasswd"], input="".join(f"{u}:{password}\n" for u in users),
                       text=True, check=True)
        class_list = place / "class.csv"
        class_list.write_text("user,role\n" + "".join(
            f"{u},{'student' if i < students else 'instructor'}\n" for i, u in enumerate(users)))
        port = free_ports(4)
        env = {**os.environ, "HUB_STATE": str(place / "state"), "HUB_PORT": str(port),
               "HUB_COURSE": str(course_root), "HUB_CLASS": str(class_list),
               "AUTOGRADER_EXCHANGE": str(place / "exchange"), "AUTOGRADER_COURSE_ID": course_id}
        verify: str | bool = True
        if tls:
            certificate, key = self_signed(place, "localhost")
            env |= {"HUB_TLS_CERT": str(certificate), "HUB_TLS_KEY": str(key)}
            verify = str(certificate)
        subprocess.run([sys.executable, "-m", "hub.classroom", "setup"], env=env, cwd=REPO,
                       check=True, capture_output=True)
        log = place / "hub.log"
        with log.open("w") as handle:
            process = subprocess.Popen(
                [str(Path(sys.executable).parent / "jupyterhub"), "-f",
                 str(REPO / "hub" / "jupyterhub_config.py")],
                env=env, cwd=place, stdout=handle, stderr=subprocess.STDOUT,
                start_new_session=True)
        url = f"https://localhost:{port}" if tls else f"http://127.0.0.1:{port}"
        try:
            deadline = time.monotonic() + 90
            while True:
                try:
                    if requests.get(f"{url}/hub/health", timeout=5, verify=verify).ok:
                        break
                except requests.ConnectionError:
                    pass
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the hub did not start:\n{log.read_text()[-4000:]}")
                time.sleep(0.5)
            yield Hub(url, users[:students], users[students:], password, place / "exchange",
                      course_id, log, verify)
        finally:
            from tests.conftest import stop_group

            stop_group(process)
            # The hub stops its services when it stops; if it had to be killed, they did
            # not: every process started for this hub names its folder.
            subprocess.run(["pkill", "-KILL", "-f", str(place)], check=False)
            if log.exists():       # kept for a failing test's report: the hub's own words
                (Path(os.environ.get("PYTEST_HUB_LOGS", "/tmp")) / "hub-last.log").write_text(
                    log.read_text())
            subprocess.run(["rm", "-rf", str(place)], check=False)
