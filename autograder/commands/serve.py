"""`serve`: graded on arrival — submissions taken from nbgrader's exchange, graded, and
their feedback released to each student, round after round.

On a JupyterHub, students fetch an assignment and submit it from JupyterLab's Assignment
List, through nbgrader's filesystem exchange (:mod:`autograder.course.exchange`). Each
round of :func:`serve_round`:

1. finds, in ``inbound/``, each student's latest submission of the served assignments
   (:func:`arrivals`). The folder's name is the student's own claim, so it is checked
   against the folder's owner (nbgrader's own ``collect`` only warns when they differ, so
   a student could hand in as another); a folder owned by someone else is refused, and
   named in the round's result. The submission time is when the folder last changed on
   the exchange's file system (its ctime, which no user can set), not the time its name
   or ``timestamp.txt`` claims;
2. copies each new one into ``submitted/<student>/<assignment>/`` (:func:`take`) — if the
   limits on official gradings of ``deadlines.toml`` allow it (:mod:`.allowance`; if not,
   the student is told so, and when the next may be, in place of feedback): regular
   files only, read through directory descriptors without following a symbolic link, which
   the student could plant, or swap in while the folder is read, to point at another
   student's work (:func:`_read_submission`), within :data:`MAX_BYTES`; nbgrader's
   ``timestamp.txt`` is written with the arrival time, and ``submission_secret.txt`` is
   kept, as nbgrader's release of feedback needs it;
3. grades what is new with the same pipeline and gradebook as ``grade`` (sandboxed, one
   writer, resumable: a round stopped half-way grades the rest in the next, and nothing
   already recorded is graded again);
4. writes the feedback of each student graded and releases it through the exchange
   (:func:`release`): one page per notebook, the summary (score, hints, late policy) on
   top of the annotated notebook, under the hash of nbgrader's ``notebook_hash``, which
   only that student's copy of the submission can compute, with the official gradings
   used and left, and, where the best grading counts (``counts = "best"``), which one does:
   a latest submission that scored less than an earlier one is kept, and the earlier one put
   back and graded again in the same round (:mod:`.attempts`). The student's Assignment
   List fetches it. When a person grades a written answer (``manual``, the formgrader),
   the next round writes and releases that student's feedback again; so it does for a
   grade recorded by a service stopped before it could release the feedback.

``python -m autograder serve`` runs rounds until it is stopped (SIGTERM or SIGINT ends it
after the round under way, and ``--once`` after one round).
"""

from __future__ import annotations

import hashlib
import json
import os
import signal
import stat
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from nbgrader.api import Gradebook
from nbgrader.utils import notebook_hash

from ..course import Course, Outcome
from ..course.defaults import DEFAULT_TIMEOUT
from ..course.exchange import Exchange, InboundName
from ..course.files import incoming_beside, swap_in
from ..course.languages import ENGLISH, split_name
from ..course.outcome import load_outcome
from ..lms import deadlines
from ..submission.gradebook import comments_of, grades_of
from .allowance import Allowance, Ledger
from .attempts import ATTEMPTS_FOLDER, Attempt, attempts_of, best, counting, keep, put_back
from .feedback import (
    EXCHANGE_RECORDS,
    RELEASED_FILE,
    feedback,
    render_allowance,
    render_counting,
    render_not_graded,
    with_summary,
)
from .grade import grade

MAX_BYTES = 50 * 2**20               # what one submission may weigh
ARRIVAL_FILE = ".exchange-arrival.json"   # in submitted/<student>/<assignment>/
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S.%f %Z"   # nbgrader's
FEEDBACK_FOLDER_MODE = 0o711         # as nbgrader's release_feedback makes it: no listing


@dataclass(frozen=True)
class Arrival:
    """A student's latest submission of an assignment in the exchange."""

    student: str
    assignment: str
    folder: Path
    arrived: datetime        # UTC: when the folder last changed (its ctime)

    def record(self) -> dict:
        return {"folder": self.folder.name, "arrived": self.arrived.isoformat()}


@dataclass
class Round:
    """What one round did."""

    collected: list[Arrival] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)       # folders not taken, and why
    graded: list[Outcome] = field(default_factory=list)
    released: list[tuple[str, str]] = field(default_factory=list)   # (student, assignment)
    limited: list[Arrival] = field(default_factory=list)   # not graded: limits reached
    updated: list[tuple[str, str]] = field(default_factory=list)   # released again
    put_back: list[tuple[str, str]] = field(default_factory=list)  # the best attempt again


def arrivals(exchange: Exchange, assignments: list[str]) -> tuple[list[Arrival], list[str]]:
    """The latest submission of each student and served assignment in ``inbound/``, and the
    folders refused (another user's name on it, not a folder)."""
    latest: dict[tuple[str, str], Arrival] = {}
    refused = []
    if not exchange.inbound.is_dir():
        return [], []
    for folder in sorted(exchange.inbound.iterdir()):
        name = InboundName.parse(folder.name)
        if name is None or name.assignment not in assignments:
            continue
        if folder.is_symlink() or not folder.is_dir():
            refused.append(f"{folder.name}: not a folder")
            continue
        owner = exchange.user_of(folder.lstat().st_uid)
        if owner != name.student:
            refused.append(f"{folder.name}: handed in by {owner}, not by {name.student}")
            continue
        arrived = datetime.fromtimestamp(folder.lstat().st_ctime, UTC)
        arrival = Arrival(name.student, name.assignment, folder, arrived)
        key = (name.student, name.assignment)
        if key not in latest or arrived > latest[key].arrived:
            latest[key] = arrival
    return sorted(latest.values(), key=lambda a: a.arrived), refused


def _read_submission(folder: Path, student: str, exchange: Exchange) -> dict[Path, bytes] | str:
    """The regular files of a submission's folder, ``{relative path: content}``, or why it
    is refused. Read through directory descriptors (``os.fwalk``) and ``O_NOFOLLOW``: the
    folder is its student's, who could swap any part of it for a symbolic link while it is
    read; nothing is followed, and the folder read is the one whose owner was checked."""
    files: dict[Path, bytes] = {}
    total = 0
    for top, _, names, top_fd in os.fwalk(folder, follow_symlinks=False):
        if Path(top) == folder and exchange.user_of(os.fstat(top_fd).st_uid) != student:
            return "its folder changed hands while it was read"
        for name in names:
            try:
                fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=top_fd)
            except OSError:
                continue                       # a link, or gone: never followed
            with os.fdopen(fd, "rb") as handle:
                if not stat.S_ISREG(os.fstat(fd).st_mode):
                    continue                   # a device, a pipe
                content = handle.read(MAX_BYTES - total + 1)
            total += len(content)
            if total > MAX_BYTES:
                return f"larger than {MAX_BYTES // 2**20} MB"
            files[Path(top).relative_to(folder) / name] = content
    return files


def waiting(course: Course, exchange: Exchange, assignments: list[str]) -> list[Arrival]:
    """The latest submissions in the exchange that have not been taken yet."""
    found, _ = arrivals(exchange, assignments)
    return [a for a in found if not _taken(course, a)]


def _arrival_record(course: Course, student: str, assignment: str) -> dict:
    """What ``submitted/`` says of the arrival taken last (:meth:`Arrival.record`, and under
    ``counts = "best"`` which kept attempt is there in its place); {} if none came through
    the exchange."""
    marker = course.submitted / student / assignment / ARRIVAL_FILE
    return json.loads(marker.read_text()) if marker.is_file() else {}


def _taken(course: Course, arrival: Arrival) -> bool:
    """Whether ``arrival`` was taken last (its submission, or under ``counts = "best"`` a
    better earlier one put back in its place, is in ``submitted/``)."""
    record = _arrival_record(course, arrival.student, arrival.assignment)
    return {key: record.get(key) for key in arrival.record()} == arrival.record()


def take(course: Course, exchange: Exchange, arrival: Arrival) -> bool | str:
    """Copy a submission into ``submitted/``: True if it is new, False if it was taken
    already, or why it is refused."""
    target = course.submitted / arrival.student / arrival.assignment
    if _taken(course, arrival):
        return False
    files = _read_submission(arrival.folder, arrival.student, exchange)
    if isinstance(files, str):
        return f"{arrival.folder.name}: {files}"
    incoming = incoming_beside(target)
    incoming.mkdir(parents=True)
    for relative, content in files.items():
        destination = incoming / relative
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(content)
    (incoming / "timestamp.txt").write_text(arrival.arrived.strftime(TIMESTAMP_FORMAT))
    (incoming / ARRIVAL_FILE).write_text(json.dumps(arrival.record()))
    swap_in(incoming, target)
    return True


def hand_grades(gb: Gradebook, student: str, assignment: str) -> str:
    """A digest of a submission's grades and comments given by hand: what, once changed,
    makes its feedback be written and released again."""
    grades = grades_of(gb, assignment, student)
    comments = comments_of(gb, assignment, student)
    given = sorted([(f"{nb}:{cell}", g.manual_score) for (nb, cell), g in grades.items()
                    if g.manual_score is not None]
                   + [(f"{nb}:{cell}#", c.manual_comment) for (nb, cell), c in comments.items()
                      if c.manual_comment])
    return hashlib.sha256(json.dumps(given, default=str).encode()).hexdigest()


def release(course: Course, exchange: Exchange, student: str, assignment: str,
            note: str = "") -> bool:
    """Release a student's feedback through the exchange: for each notebook of their
    submission, the annotated notebook graded for it (a translated notebook is graded as
    its English one), with the summary on top, under nbgrader's hash of the submission's
    secret and the notebook's name — every one of them, as nbgrader's Assignment List
    offers feedback only when each notebook of the submission has some. False if the
    submission did not come through the exchange (no secret)."""
    folder = course.feedback / student / assignment
    submitted = course.submitted / student / assignment
    secret_file = submitted / EXCHANGE_RECORDS[1]
    summary = folder / "index.html"
    if not secret_file.is_file() or not summary.is_file():
        return False
    secret = secret_file.read_text()
    destination = exchange.root / exchange.course_id / "feedback"
    destination.mkdir(parents=True, exist_ok=True)
    os.chmod(destination, FEEDBACK_FOLDER_MODE)
    for handed_in in sorted(submitted.glob("*.ipynb")):
        page = folder / f"{split_name(handed_in.stem)[0]}.html"
        if not page.is_file():
            continue
        name = notebook_hash(secret=secret, notebook_id=handed_in.stem)
        partial = destination / f"{name}-tmp.html"
        partial.write_text(with_summary(page.read_text(), summary.read_text(), note))
        os.chmod(partial, 0o644)
        partial.replace(destination / f"{name}.html")
    with Gradebook(course.db_url) as gb:
        (folder / RELEASED_FILE).write_text(hand_grades(gb, student, assignment))
    return True


def to_release_again(course: Course, assignments: list[str]) -> list[tuple[str, str]]:
    """(student, assignment) of the graded submissions from the exchange whose feedback is
    not released as it stands: never released (the service was stopped between recording
    the grade and releasing it), or graded by hand since."""
    changed = []
    with Gradebook(course.db_url) as gb:
        for secret in sorted(course.submitted.glob(f"*/*/{EXCHANGE_RECORDS[1]}")):
            student, assignment = secret.parent.parent.name, secret.parent.name
            if assignment not in assignments or load_outcome(course, student, assignment) is None:
                continue
            marker = course.feedback / student / assignment / RELEASED_FILE
            if not marker.is_file() or marker.read_text() != hand_grades(gb, student, assignment):
                changed.append((student, assignment))
    return changed


def _read_small(path: Path, limit: int = 4096) -> str:
    """A small file a student wrote, read without following a link."""
    with os.fdopen(os.open(path, os.O_RDONLY | os.O_NOFOLLOW), "rb") as handle:
        return handle.read(limit).decode("utf-8", "replace")


def tell_not_graded(exchange: Exchange, arrival: Arrival, allowance: Allowance,
                    best: bool = False) -> bool:
    """Release, for a submission the limits did not let be graded, a page that says so and
    when the next may be, and which grading counts (the last, or with ``best`` the best;
    once: False if it was told already, or cannot be)."""
    try:
        secret = _read_small(arrival.folder / EXCHANGE_RECORDS[1])
    except OSError:
        return False
    destination = exchange.root / exchange.course_id / "feedback"
    destination.mkdir(parents=True, exist_ok=True)
    os.chmod(destination, FEEDBACK_FOLDER_MODE)
    names = [notebook_hash(secret=secret, notebook_id=p.stem)
             for p in sorted(arrival.folder.glob("*.ipynb"))]
    if not names or all((destination / f"{name}.html").exists() for name in names):
        return False
    page = render_not_graded(arrival.assignment, arrival.student, allowance, best=best)
    for name in names:
        partial = destination / f"{name}-tmp.html"
        partial.write_text(page)
        os.chmod(partial, 0o644)
        partial.replace(destination / f"{name}.html")
    return True


def serve_round(course: Course, exchange: Exchange, assignments: list[str], jobs: int = 2,
                timeout: int = DEFAULT_TIMEOUT, scheduler: str | None = None) -> Round:
    """One round: take what arrived (within the limits on official gradings), grade what
    is new (on the Dask cluster at ``scheduler``, else a local one of ``jobs`` workers),
    release its feedback. Where the best official grading counts, a latest submission that
    scored less than an earlier one is followed, in the same round, by that one put back
    and graded again (:mod:`.attempts`)."""
    result = Round()
    policy, ledger = deadlines.load(course), Ledger(course)
    found, result.refused = arrivals(exchange, assignments)
    for arrival in found:
        if _taken(course, arrival):
            continue
        allowance = ledger.allowance(policy.of(arrival.assignment), arrival.student,
                                     arrival.assignment, arrival.arrived)
        if not allowance.allowed:
            best = policy.of(arrival.assignment).counts == deadlines.BEST
            if tell_not_graded(exchange, arrival, allowance, best):
                result.limited.append(arrival)
            continue
        taken = take(course, exchange, arrival)
        if isinstance(taken, str):
            result.refused.append(taken)
        elif taken:
            ledger.record(arrival.student, arrival.assignment, arrival.arrived)
            result.collected.append(arrival)

    def grade_now() -> list[Outcome]:
        return grade(course, assignments, jobs=jobs, timeout=timeout, progress=False,
                     scheduler=scheduler)

    unfinished = _put_back_unfinished(course, policy, assignments)
    result.graded = grade_now()
    counted, back = _count_the_best(course, policy, result.graded)
    counted.update({key: counting(attempt, attempt) for key, attempt in unfinished.items()})
    result.put_back = sorted(unfinished)
    graded = {(o.student, o.assignment) for o in result.graded}
    result.updated = [key for key in to_release_again(course, assignments)
                      if key not in graded]
    _release_feedback(course, exchange, policy, ledger, graded, result.updated, counted, result)
    if back:
        for (student, assignment), (attempt, marker) in back.items():
            put_back(course, student, assignment, attempt, (ARRIVAL_FILE, marker))
        regraded = grade_now()
        result.graded += regraded
        result.put_back = sorted(set(result.put_back) | set(back))
        again = {(o.student, o.assignment) for o in regraded}
        counts = {key: counting(attempt, attempt) for key, (attempt, _) in back.items()}
        _release_feedback(course, exchange, policy, ledger, again, [], counts, result)
    return result


def _tests_points(outcome: Outcome) -> tuple[float, float]:
    """(score, max_score) of the cells the tests grade (written answers wait for a person)."""
    cells = [c for c in outcome.cells if c.graded_by == "tests"]
    return sum(c.score for c in cells), sum(c.max_score for c in cells)


def _put_back_unfinished(course: Course, policy: deadlines.Deadlines, assignments: list[str]
                         ) -> dict[tuple[str, str], Attempt]:
    """Where the best official grading counts and a service stopped after keeping a latest
    attempt that is not the best, but before putting the best back: put it back now (it is
    graded in this round). {(student, assignment): the attempt put back}."""
    done = {}
    for assignment in assignments:
        if policy.of(assignment).counts != deadlines.BEST:
            continue
        for folder in sorted((course.root / ATTEMPTS_FOLDER).glob(f"*/{assignment}")):
            student = folder.parent.name
            record = _arrival_record(course, student, assignment)
            kept = attempts_of(course, student, assignment)
            this = next((a for a in kept if a.folder.name == record.get("folder")), None)
            if record.get("counts") or this is None:
                continue
            top = best(kept)
            if top.folder != this.folder:
                put_back(course, student, assignment, top,
                         (ARRIVAL_FILE, json.dumps({**record, "counts": top.folder.name})))
                done[student, assignment] = top
    return done


def _count_the_best(course: Course, policy: deadlines.Deadlines, graded: list[Outcome]
                    ) -> tuple[dict, dict]:
    """Where the best official grading counts: keep each newly graded submission as an
    attempt; ({(student, assignment): what to tell them}, {(student, assignment): (the best
    attempt, the arrival record that puts it back)} for those whose latest is not their
    best)."""
    counted, back = {}, {}
    for outcome in graded:
        key = (outcome.student, outcome.assignment)
        if policy.of(outcome.assignment).counts != deadlines.BEST:
            continue
        record = _arrival_record(course, *key)
        if not record or record.get("counts"):
            continue               # not from the exchange, or an attempt put back
        score, max_score = _tests_points(outcome)
        this = keep(course, *key, record["folder"], record["arrived"], score, max_score)
        top = best(attempts_of(course, *key))
        counted[key] = counting(this, top)
        if top.folder != this.folder:
            back[key] = (top, json.dumps({**record, "counts": top.folder.name}))
    return counted, back


def _release_feedback(course: Course, exchange: Exchange, policy: deadlines.Deadlines,
                      ledger: Ledger, graded: set[tuple[str, str]],
                      updated: list[tuple[str, str]], counted: dict, result: Round) -> None:
    """Write and release the feedback of what was ``graded`` and what hand grades
    ``updated``, with the official gradings used and left, and which one counts."""
    now = datetime.now(UTC)
    for assignment in sorted({a for _, a in graded | set(updated)}):
        students = sorted({s for s, a in graded | set(updated) if a == assignment})
        feedback(course, [assignment], students)
        for student in students:
            outcome = load_outcome(course, student, assignment)
            language = (outcome and outcome.language) or ENGLISH
            allowance = ledger.allowance(policy.of(assignment), student, assignment, now)
            note = render_allowance(allowance, language)
            if (student, assignment) in counted:
                note = render_counting(counted[student, assignment], language) + note
            if release(course, exchange, student, assignment, note) \
                    and (student, assignment) in graded:
                result.released.append((student, assignment))


LMS_RETRY_SECONDS = 300      # grades the LMS did not take: tried again at most this often


def grades_to_the_lms(course: Course, assignments: list[str]) -> list[str]:
    """Where the course is registered with an LMS over LTI (``lti.toml``), send it the
    grades it lacks (:mod:`.lti`); the lines to report. Never stops the service."""
    from ..lms.lti.settings import LtiSettingsError, load

    try:
        settings = load(course)
    except LtiSettingsError as error:
        return [f"LTI: {error}"]
    if settings is None:
        return []
    from .lti import platform_for, sync

    try:
        done = sync(course, platform_for(settings), assignments)
    except Exception as error:       # noqa: BLE001 - reported; grading goes on
        return [f"LTI: grades not sent this round ({type(error).__name__}: {error}); "
                f"kept in the gradebook, sent in a later round"]
    return done.lines(unknown=False)      # each round: who is not known yet, only in sync


def serve(course: Course, exchange: Exchange, assignments: list[str], jobs: int = 2,
          timeout: int = DEFAULT_TIMEOUT, interval: float = 5.0, once: bool = False,
          report=print, scheduler: str | None = None) -> None:
    """Rounds until SIGTERM or SIGINT (after the round under way) or, with ``once``, one.
    Everything the service writes in the course is its own only (umask 077): on a hub,
    students log in to the same machine."""
    os.umask(0o077)
    stopping: list[bool] = []
    told: set[str] = set()
    last_sync = float("-inf")
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stopping.append(True))
    while True:
        started = time.monotonic()
        result = serve_round(course, exchange, assignments, jobs, timeout, scheduler)
        result.refused, told = [r for r in result.refused if r not in told], \
            told | set(result.refused)
        for arrival in result.collected:
            report(f"arrived: {arrival.student} {arrival.assignment} "
                   f"({arrival.arrived.isoformat(timespec='seconds')})")
        for reason in result.refused:
            report(f"refused: {reason}")
        for outcome in result.graded:
            report(f"graded: {outcome.student} {outcome.assignment} "
                   f"{outcome.score:g} / {outcome.max_score:g}")
        for student, assignment in result.released:
            report(f"feedback released: {student} {assignment}")
        for student, assignment in result.updated:
            report(f"feedback updated: {student} {assignment}")
        for student, assignment in result.put_back:
            report(f"best attempt put back and graded again: {student} {assignment}")
        for arrival in result.limited:
            report(f"not graded (limits reached): {arrival.student} {arrival.assignment}")
        # Grades to the LMS when they changed, and every few minutes (what it did not take)
        if result.graded or result.updated or result.put_back or \
                time.monotonic() - last_sync > LMS_RETRY_SECONDS:
            last_sync = time.monotonic()
            for line in grades_to_the_lms(course, assignments):
                report(line)
        if once or stopping:
            return
        time.sleep(max(0.0, interval - (time.monotonic() - started)))
        if stopping:
            return
