"""Graded on arrival: real local users fetch and submit through nbgrader's own commands
and exchange, ``serve`` grades and releases, each fetches their own feedback — and a
student can neither read another's work nor hand in as another."""

from __future__ import annotations

import json
import re
import shutil
import uuid
from pathlib import Path

import nbformat
import pytest

from autograder.proving.catalogue import implementations
from autograder.proving.diagnosis import hint_of
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli
from tests.hub_users import as_user, give, local_users, need_root

COURSE_ID = "attention-nlp"
EXCHANGE_PARENT = Path("/srv/attention-course-tests")

pytestmark = pytest.mark.xdist_group("exchange")


def nbgrader(user: str, exchange: Path, *args: str, check: bool = True):
    return as_user(user, "nbgrader", *args, "--course", COURSE_ID,
                   f"--Exchange.root={exchange}", check=check)


def _feedback_pages(user: str) -> list[str]:
    import pwd

    home = Path(pwd.getpwnam(user).pw_dir)
    return [p.read_text() for p in sorted(home.glob(f"{ASSIGNMENT}/feedback/*/{ASSIGNMENT}.html"))]


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    need_root()
    root = EXCHANGE_PARENT / uuid.uuid4().hex / "exchange"
    root.parent.mkdir(parents=True)
    EXCHANGE_PARENT.chmod(0o755)
    root.parent.chmod(0o755)
    try:
        yield root
    finally:
        shutil.rmtree(root.parent, ignore_errors=True)


def test_graded_on_arrival_through_the_exchange(exchange, tmp_path):
    course = make_course(tmp_path / "course")
    published = run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                        "release", ASSIGNMENT)
    assert published.returncode == 0, published.stderr
    mutant = next(i for i in implementations(ASSIGNMENT, "mutant") if i.name == "scaled_by_sqrt_n")
    with local_users(3) as (ada, ben, cyd):
        for user in (ada, ben, cyd):
            nbgrader(user, exchange, "fetch_assignment", ASSIGNMENT)
        home = {user: Path(f"/home/{user}") for user in (ada, ben, cyd)}
        notebook = f"{ASSIGNMENT}/{ASSIGNMENT}.ipynb"
        assert (home[ada] / notebook).is_file()
        assert (home[ada] / f"{ASSIGNMENT}/{ASSIGNMENT}.zh_CN.ipynb").is_file()
        give(ada, home[ada] / notebook, nbformat.writes(filled(course)))
        give(ben, home[ben] / notebook, nbformat.writes(filled(course, mutant.code)))
        nbgrader(ada, exchange, "submit", ASSIGNMENT)
        nbgrader(ben, exchange, "submit", ASSIGNMENT)

        # Cyd hands in a wrong notebook under Ada's name, straight into the exchange.
        inbound = exchange / COURSE_ID / "inbound"
        forged = f"{ada}+{ASSIGNMENT}+2099-01-01 00:00:00.000000 UTC+forged"
        as_user(cyd, "mkdir", str(inbound / forged))
        as_user(cyd, "cp", str(home[cyd] / notebook), str(inbound / forged / f"{ASSIGNMENT}.ipynb"))
        # ... and can list neither the submissions nor anyone's home.
        for private in (inbound, home[ada], home[ben] / ASSIGNMENT):
            assert as_user(cyd, "ls", str(private), check=False).returncode != 0

        served = run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                         "serve", ASSIGNMENT, "--once")
        assert served.returncode == 0, served.stderr
        assert f"refused: {forged}: handed in by {cyd}, not by {ada}" in served.stdout
        assert re.search(rf"graded: {ada} {ASSIGNMENT} 14 / 18", served.stdout)
        assert f"feedback released: {ben} {ASSIGNMENT}" in served.stdout

        for user in (ada, ben, cyd):
            nbgrader(user, exchange, "fetch_feedback", ASSIGNMENT, check=user != cyd)
        ada_page, = _feedback_pages(ada)
        ben_page, = _feedback_pages(ben)
        assert f"{ASSIGNMENT}: 14 / 18" in ada_page and f"<strong>{ada}</strong>" in ada_page
        assert hint_of(mutant) in ben_page and f"<strong>{ben}</strong>" in ben_page
        assert ada not in ben_page and ben not in ada_page
        assert _feedback_pages(cyd) == []
        feedback_folder = exchange / COURSE_ID / "feedback"
        assert as_user(cyd, "ls", str(feedback_folder), check=False).returncode != 0
        scores = json.loads(run_cli(course, "export", "--json", "/dev/stdout").stdout
                            .split("\nexported")[0])["students"]
        assert scores[ada][ASSIGNMENT]["score"] == 14.0      # the forgery changed nothing

        # A second round with nothing new grades nothing; Ben's resubmission is graded.
        again = run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                        "serve", ASSIGNMENT, "--once")
        assert "graded:" not in again.stdout and "refused:" in again.stdout
        give(ben, home[ben] / notebook, nbformat.writes(filled(course)))
        nbgrader(ben, exchange, "submit", ASSIGNMENT)
        third = run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                        "serve", ASSIGNMENT, "--once")
        assert f"graded: {ben} {ASSIGNMENT} 14 / 18" in third.stdout
        nbgrader(ben, exchange, "fetch_feedback", ASSIGNMENT)
        assert any(f"{ASSIGNMENT}: 14 / 18" in page for page in _feedback_pages(ben))


def test_exchange_names_are_read_as_nbgrader_reads_them():
    from autograder.course.exchange import InboundName

    name = InboundName.parse("a+b+c+attention-scoring+2026-10-05 10:00:00.000000 UTC+x1y2")
    assert (name.student, name.assignment) == ("a+b+c", "attention-scoring")
    assert InboundName.parse("no-plus-signs") is None
    assert InboundName.parse("a+b++x") is None
