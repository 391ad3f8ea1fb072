"""A class submitting at once: the grading service under load, and killed mid-stream.

Creates ``--students`` real local users (default 60), releases ``attention-scoring`` to a
scratch exchange, and has every student fetch it and submit it with nbgrader's own
commands, as that user, within about a minute (a third correct, a third with a catalogued
mistake, a third untouched), while ``python -m autograder serve`` runs. Half-way through
the submissions the service is killed (SIGKILL: no clean-up) and started again. At the
end, every student's feedback must have been released to the exchange, every submission
graded once (the service's own log, and the gradebook), none lost; it prints the time from
each ``nbgrader submit`` returning to the student's feedback file appearing in the
exchange (median, 95th percentile, maximum), as the student's Assignment List would see
it, and the machine's CPU seconds per submission (the figure hub/kubernetes/README.md sizes
a cluster with).

    python benchmarks/hub_load.py [--students 60] [--jobs 2]     # as root

Run as root: it creates and removes the users, and the service grades in the sandbox.
"""

from __future__ import annotations

import argparse
import os
import pwd
import random
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import nbformat
from nbgrader.utils import notebook_hash

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from autograder.proving.catalogue import implementations  # noqa: E402
from tests.conftest import ASSIGNMENT, filled, make_course, run_cli  # noqa: E402
from tests.hub_users import as_user, give, local_users  # noqa: E402

COURSE_ID = "attention-nlp"


def nbgrader(user: str, exchange: Path, *args: str) -> None:
    as_user(user, "nbgrader", *args, "--course", COURSE_ID, f"--Exchange.root={exchange}")


def start_service(course, exchange: Path, jobs: int, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "autograder", "--root", str(course.root), "--exchange",
         str(exchange), "--course-id", COURSE_ID, "serve", ASSIGNMENT, "--jobs", str(jobs),
         "--interval", "2"],
        stdout=log.open("a"), stderr=subprocess.STDOUT, cwd=REPO, start_new_session=True)


def machine_cpu_seconds() -> float:
    """CPU time the whole machine has spent computing since boot (user, nice, system, irq
    and softirq of /proc/stat; idle and waiting left out)."""
    fields = [int(x) for x in Path("/proc/stat").read_text().split("\n")[0].split()[1:8]]
    user, nice, system, _idle, _iowait, irq, softirq = fields
    return (user + nice + system + irq + softirq) / os.sysconf("SC_CLK_TCK")


def feedback_file(exchange: Path, user: str) -> Path | None:
    """The exchange's feedback file of ``user``'s latest submission (from their cache)."""
    cache = Path(pwd.getpwnam(user).pw_dir) / ".local/share/jupyter/nbgrader_cache" / COURSE_ID
    submissions = sorted(cache.glob(f"{user}+{ASSIGNMENT}+*"))
    if not submissions:
        return None
    secret = (submissions[-1] / "submission_secret.txt").read_text()
    name = notebook_hash(secret=secret, notebook_id=ASSIGNMENT)
    return exchange / COURSE_ID / "feedback" / f"{name}.html"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--students", type=int, default=60)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--within", type=float, default=60.0,
                        help="seconds over which the submissions are spread")
    args = parser.parse_args()
    if os.geteuid() != 0:
        sys.exit("run as root: it creates local users and grades in the sandbox")

    place = Path("/srv/attention-course-tests") / f"load-{uuid.uuid4().hex}"
    place.mkdir(parents=True, mode=0o755)
    Path("/srv/attention-course-tests").chmod(0o755)
    scratch = Path(tempfile.mkdtemp(prefix="hub-load-"))
    exchange = place / "exchange"
    log = scratch / "serve.log"
    try:
        course = make_course(scratch / "course")
        assert run_cli(course, "--exchange", str(exchange), "--course-id", COURSE_ID,
                       "release", ASSIGNMENT).returncode == 0
        mutant = next(i for i in implementations(ASSIGNMENT, "mutant")
                      if i.name == "scaled_by_sqrt_n")
        work = [nbformat.writes(filled(course)), nbformat.writes(filled(course, mutant.code)),
                None]
        with local_users(args.students, prefix="load") as users:
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda u: nbgrader(u, exchange, "fetch_assignment", ASSIGNMENT),
                              users))
            for index, user in enumerate(users):
                if work[index % 3] is not None:
                    give(user, Path(pwd.getpwnam(user).pw_dir) / ASSIGNMENT /
                         f"{ASSIGNMENT}.ipynb", work[index % 3])
            cpu_before, window_began = machine_cpu_seconds(), time.monotonic()
            service = start_service(course, exchange, args.jobs, log)
            submitted: dict[str, float] = {}
            lock = threading.Lock()
            rng = random.Random(0)
            offsets = sorted(rng.uniform(0, args.within) for _ in users)
            began = time.monotonic()

            def submit(pair: tuple[str, float]) -> None:
                user, offset = pair
                time.sleep(max(0.0, offset - (time.monotonic() - began)))
                nbgrader(user, exchange, "submit", ASSIGNMENT)
                with lock:
                    submitted[user] = time.monotonic()

            killed_at = None
            with ThreadPoolExecutor(8) as pool:
                futures = [pool.submit(submit, pair) for pair in zip(users, offsets, strict=True)]
                while not all(f.done() for f in futures):
                    if killed_at is None and len(submitted) >= len(users) // 2:
                        os.killpg(service.pid, signal.SIGKILL)       # no clean-up at all
                        service.wait()
                        killed_at = len(submitted)
                        service = start_service(course, exchange, args.jobs, log)
                    time.sleep(0.2)
                for future in futures:
                    future.result()
            waits: dict[str, float] = {}
            deadline = time.monotonic() + 1800
            while len(waits) < len(users) and time.monotonic() < deadline:
                for user in users:
                    if user not in waits:
                        path = feedback_file(exchange, user)
                        if path is not None and path.exists():
                            waits[user] = time.monotonic() - submitted[user]
                time.sleep(0.5)
            cpu_used = machine_cpu_seconds() - cpu_before
            window = time.monotonic() - window_began
            os.killpg(service.pid, signal.SIGTERM)
            service.wait(timeout=120)
        lines = log.read_text().splitlines()
        graded = [line for line in lines if line.startswith("graded: ")]
        per_student = {u: sum(line.split()[1] == u for line in graded) for u in users}
        exported = run_cli(course, "export", "--json", str(scratch / "grades.json"))
        assert exported.returncode == 0, exported.stderr
        import json

        scores = json.loads((scratch / "grades.json").read_text())["students"]
        missing_feedback = sorted(set(users) - set(waits))
        times = sorted(waits.values())
        p95 = times[min(len(times) - 1, int(round(0.95 * (len(times) - 1))))] if times else 0
        print(f"students: {len(users)}, submissions spread over {args.within:.0f} s, "
              f"service killed (SIGKILL) after {killed_at} submissions and started again")
        # A grade recorded by the killed service has no line of its log: the gradebook
        # and the outcome files say it was graded, and the new service did not grade it again.
        recorded = {u for u in users
                    if (course.autograded / u / ASSIGNMENT / "autograder-outcome.json").exists()}
        once = sum(1 for u in users if u in recorded and per_student[u] <= 1)
        print(f"graded once: {once}, twice or more: {sum(n > 1 for n in per_student.values())}, "
              f"never: {len(set(users) - recorded)}; "
              f"in the gradebook: {sum(u in scores for u in users)}")
        print(f"feedback released to: {len(waits)} (missing: {missing_feedback or 'none'})")
        if times:
            print(f"submit -> feedback in the exchange: median {statistics.median(times):.1f} s, "
                  f"95th percentile {p95:.1f} s, maximum {times[-1]:.1f} s "
                  f"(--jobs {args.jobs}, {os.cpu_count()} cores)")
        print(f"CPU: {cpu_used:.0f} s for {len(recorded)} submissions, "
              f"{cpu_used / max(1, len(recorded)):.1f} s each (the whole machine from the "
              "service's start to the last feedback: grading, both services' start-ups, the "
              f"students' nbgrader commands), in {window:.0f} s: the cores busy "
              f"{100 * cpu_used / (window * (os.cpu_count() or 1)):.0f} % of the time")
        ok = not missing_feedback and once == len(users) and all(u in scores for u in users)
        sys.exit(0 if ok else 1)
    finally:
        subprocess.run(["rm", "-rf", str(place), str(scratch)], check=False)


if __name__ == "__main__":
    main()
