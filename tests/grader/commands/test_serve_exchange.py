"""Graded on arrival: real local users fetch and submit through nbgrader's own commands
and exchange, ``serve`` grades and releases, each fetches their own feedback — and a
student can neither read another's work nor hand in as another."""

from __future__ import annotations

import csv
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

# A long proof (real users, real gradings round after round): in make test-full.
pytestmark = [pytest.mark.full, pytest.mark.xdist_group("exchange")]


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
    (course.root / "deadlines.toml").write_text(
        f"[assignments.{ASSIGNMENT}]\ngradings_per_hour = 1\ngradings_in_all = 2\n")
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

        # A second round with nothing new grades nothing.
        again = serve(course, exchange)
        assert "graded:" not in again.stdout

        # A person grades Ada's written answers: her feedback is written and released again.
        sheet = tmp_path / "hand.csv"
        assert run_cli(course, "manual", ASSIGNMENT, "--export", str(sheet)).returncode == 0
        with sheet.open(newline="") as handle:
            rows = list(csv.DictReader(handle))
        for row in rows:
            if row["student_id"] == ada:
                row["score"], row["comment"] = row["max_score"], "Clear and right: well done."
        with sheet.open("w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
        assert run_cli(course, "manual", ASSIGNMENT, "--import", str(sheet)).returncode == 0
        updated = serve(course, exchange)
        assert f"feedback updated: {ada} {ASSIGNMENT}" in updated.stdout
        assert ben not in updated.stdout.split("feedback updated")[-1]
        nbgrader(ada, exchange, "fetch_feedback", ASSIGNMENT)
        page, = _feedback_pages(ada)
        assert "Clear and right: well done." in page and f"{ASSIGNMENT}: 18 / 18" in page

        # The limits on official gradings: one an hour, two in all. Ben's resubmission
        # within the hour is not graded, and he is told when the next may be.
        give(ben, home[ben] / notebook, nbformat.writes(filled(course)))
        nbgrader(ben, exchange, "submit", ASSIGNMENT)
        limited = serve(course, exchange)
        assert f"not graded (limits reached): {ben} {ASSIGNMENT}" in limited.stdout
        assert "graded:" not in limited.stdout
        nbgrader(ben, exchange, "fetch_feedback", ASSIGNMENT)
        notice = [p for p in _feedback_pages(ben) if "This submission was not graded." in p]
        assert len(notice) == 1 and "as many official gradings in the last hour as this " \
            "assignment allows (1)" in " ".join(notice[0].split())
        assert "1 of 1 in the last hour; 1 of 2 in all" in " ".join(ben_page.split())

        # An hour later (the ledger's times moved back), the same submission is graded …
        ledger = course.root / "gradings.json"
        times = json.loads(ledger.read_text())
        times[ben][ASSIGNMENT] = ["2000-01-01T00:00:00+00:00"]
        ledger.write_text(json.dumps(times))
        later = serve(course, exchange)
        assert f"graded: {ben} {ASSIGNMENT} 14 / 18" in later.stdout
        nbgrader(ben, exchange, "fetch_feedback", ASSIGNMENT)
        assert any(f"{ASSIGNMENT}: 14 / 18" in page for page in _feedback_pages(ben))
        # … and a third is not: two in all.
        nbgrader(ben, exchange, "submit", ASSIGNMENT)
        last = serve(course, exchange)
        assert f"not graded (limits reached): {ben} {ASSIGNMENT}" in last.stdout
        nbgrader(ben, exchange, "fetch_feedback", ASSIGNMENT)
        assert any("every official grading this assignment allows" in page
                   for page in _feedback_pages(ben))
        scores = json.loads(run_cli(course, "export", "--json", "/dev/stdout").stdout
                            .split("\nexported")[0])["students"]
        assert scores[ben][ASSIGNMENT]["score"] == 14.0     # the last graded one counts


def serve(course, exchange):
    done = run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                   "serve", ASSIGNMENT, "--once")
    assert done.returncode == 0, done.stderr
    return done


def test_exchange_names_are_read_as_nbgrader_reads_them():
    from autograder.course.exchange import InboundName

    name = InboundName.parse("a+b+c+attention-scoring+2026-10-05 10:00:00.000000 UTC+x1y2")
    assert (name.student, name.assignment) == ("a+b+c", "attention-scoring")
    assert InboundName.parse("no-plus-signs") is None
    assert InboundName.parse("a+b++x") is None


def test_the_service_needs_no_root(tmp_path):
    """The grading service run by an unprivileged user that owns the course and the
    exchange, as a hub would run it with a service user of its own: it grades through its
    zygotes (no kernel starts cold) and releases the feedback the student fetches."""
    import pwd
    import subprocess
    import tempfile

    from tests.grader.sandbox.kernel_probes import WHO_IS_PID_1, forked_by_a_zygote
    from tests.unprivileged import as_instructor, instructor

    need_root()
    place = Path(tempfile.mkdtemp(prefix="unprivileged-service-"))
    place.chmod(0o755)
    exchange = place / "exchange"
    try:
        with instructor() as grader, local_users(1) as (ada,):
            course = make_course(place / "course")
            exchange.mkdir()
            subprocess.run(["chown", "-R", str(pwd.getpwnam(grader).pw_uid), str(place)],
                           check=True)

            def as_grader(*args: str) -> subprocess.CompletedProcess:
                done = as_instructor(grader, "python", "-m", "autograder", "--root",
                                     str(course.root), "--exchange", str(exchange),
                                     "--course-id", COURSE_ID, *args)
                assert done.returncode == 0, done.stderr[-3000:]
                return done

            as_grader("release", ASSIGNMENT)
            nbgrader(ada, exchange, "fetch_assignment", ASSIGNMENT)
            give(ada, Path(f"/home/{ada}/{ASSIGNMENT}/{ASSIGNMENT}.ipynb"),
                 nbformat.writes(filled(course, WHO_IS_PID_1)))
            nbgrader(ada, exchange, "submit", ASSIGNMENT)
            served = as_grader("serve", ASSIGNMENT, "--once")
            assert f"graded: {ada} {ASSIGNMENT} 14 / 18" in served.stdout, served.stdout
            assert "cannot confine kernels" not in served.stderr, served.stderr[-3000:]
            assert forked_by_a_zygote(course.autograded / ada / ASSIGNMENT
                                      / f"{ASSIGNMENT}.ipynb"), "a kernel started cold"
            nbgrader(ada, exchange, "fetch_feedback", ASSIGNMENT)
            page, = _feedback_pages(ada)
            assert f"{ASSIGNMENT}: 14 / 18" in page
    finally:
        shutil.rmtree(place, ignore_errors=True)
