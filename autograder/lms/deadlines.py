"""Due dates, extensions, excused students and the late policy: ``deadlines.toml``.

One course file, in the course directory, for every assignment::

    timezone = "Asia/Shanghai"      # for times written without an offset, and Moodle's

    [policies]
    standard = { per_day = 0.10, last_day = 7, grace_minutes = 15 }
    strict = "zero"                 # nbgrader's policy: late work earns nothing
    lenient = "none"                # late work is marked late, and loses nothing

    [assignments.attention-scoring]
    due = 2026-10-05T23:59:00
    policy = "standard"
    extensions = { "smithjohn-12345" = 2026-10-08T23:59:00 }
    excused = ["jane-doe"]
    canvas_late_days = 1            # Canvas's LATE_ without a time counts as this many days
    gradings_per_hour = 3           # on a hub: official gradings a student may ask for …
    gradings_in_all = 10            # … in any hour, and in all
    counts = "best"                 # which of them counts: "last" (the default) or "best"

A submission is late by the days, started, between its due date (the student's extension,
if any) and its submission time, after ``grace_minutes``. Under ``per_day`` a late
submission keeps ``1 - per_day × days`` of the points it earned, and nothing after
``last_day`` days; ``"zero"`` keeps nothing of late work, ``"none"`` all of it. The
submission time is the LMS's (Moodle's worksheet, nbgrader's ``timestamp.txt``); Canvas's
download says only *late*, which counts as ``canvas_late_days`` days. The raw score stays
in the gradebook; the penalty is applied where grades leave it (exports, feedback, report),
and shown beside the raw score. An excused student's assignment is not graded for credit
(Canvas: ``EX``).

On the course's JupyterHub, each submission a student hands in asks for an official
grading (``python -m autograder serve``); ``gradings_per_hour`` and ``gradings_in_all``
limit them (no limit by default). The last one graded counts, or with ``counts = "best"``
the one that earned the most points from the tests (the latest of equals): the gradebook
then holds that submission, and a person grades its written answers.
"""

from __future__ import annotations

import math
import tomllib
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from ..course import Course

DEADLINES_FILE = "deadlines.toml"
DAY = timedelta(days=1)
LAST, BEST = "last", "best"
COUNTS = (LAST, BEST)      # which of a student's official gradings counts


class DeadlinesError(ValueError):
    """``deadlines.toml`` cannot be used: refused whole, with the key named."""


@dataclass(frozen=True)
class Policy:
    """How much of its earned points a submission late by some days keeps."""

    per_day: float = 0.0             # credit lost per started day late
    last_day: int | None = None      # after this many days: nothing
    zero: bool = False               # nbgrader's "zero": late work earns nothing
    grace_minutes: int = 0

    def credit(self, days: int) -> float:
        if days <= 0:
            return 1.0
        if self.zero or (self.last_day is not None and days > self.last_day):
            return 0.0
        return max(0.0, 1.0 - self.per_day * days)

    def describe(self) -> str:
        if self.zero:
            return "late work earns nothing"
        if not self.per_day and self.last_day is None:
            return "late work loses nothing"
        text = f"{self.per_day:.0%} off per day late"
        if self.last_day is not None:
            text += f", nothing after {self.last_day} day{'s' * (self.last_day != 1)}"
        return text


ON_TIME = Policy()


@dataclass(frozen=True)
class Deadline:
    due: datetime | None = None
    policy: Policy = ON_TIME
    extensions: dict[str, datetime] = field(default_factory=dict)
    excused: frozenset[str] = frozenset()
    canvas_late_days: int = 1
    gradings_per_hour: int | None = None     # official gradings per student, in any hour
    gradings_in_all: int | None = None       # and in all
    counts: str = LAST                       # which official grading counts: COUNTS


@dataclass(frozen=True)
class Lateness:
    """What the policy makes of one submission."""

    days: int = 0                # started days late (0: on time)
    credit: float = 1.0          # the fraction of its earned points it keeps
    excused: bool = False
    basis: str = ""              # why, in words: the times compared or the LMS's flag
    submitted: str = ""          # the submission time compared (ISO 8601, to the minute)
    due: str = ""                # the due date it was compared with (the extension's)
    flagged: bool = False        # late by the LMS's flag, without a time

    def final(self, raw: float) -> float:
        return raw * self.credit

    @property
    def penalised(self) -> bool:
        return self.credit < 1.0


@dataclass(frozen=True)
class Deadlines:
    timezone: ZoneInfo
    assignments: dict[str, Deadline] = field(default_factory=dict)
    configured: bool = False     # whether the course has a deadlines file

    def of(self, assignment: str) -> Deadline:
        return self.assignments.get(assignment, Deadline())

    def lateness(self, assignment: str, student: str, submitted_at: str = "",
                 late_flag: bool = False) -> Lateness:
        """The policy applied to ``student``'s submission of ``assignment``, handed in at
        ``submitted_at`` (ISO 8601) or marked late by the LMS (``late_flag``)."""
        deadline = self.of(assignment)
        if student in deadline.excused:
            return Lateness(excused=True, basis="excused")
        due = deadline.extensions.get(student, deadline.due)
        if due is None:
            return Lateness(basis="no due date")
        extended = " (extended)" if student in deadline.extensions else ""
        if submitted_at:
            handed = datetime.fromisoformat(submitted_at)
            if handed.tzinfo is None:
                handed = handed.replace(tzinfo=self.timezone)
            over = handed - due - timedelta(minutes=deadline.policy.grace_minutes)
            days = math.ceil(over / DAY) if over > timedelta(0) else 0
            submitted, due_text = handed.isoformat(timespec="minutes"), \
                due.isoformat(timespec="minutes")
            basis = f"submitted {submitted}, due {due_text}{extended}"
            return Lateness(days, deadline.policy.credit(days), basis=basis,
                            submitted=submitted, due=due_text)
        elif late_flag:
            days = deadline.canvas_late_days
            basis = (f"marked late by the LMS, without a time: counted as {days} "
                     f"day{'s' * (days != 1)} late")
            return Lateness(days, deadline.policy.credit(days), basis=basis, flagged=True,
                            due=due.isoformat(timespec="minutes"))
        return Lateness(basis="on time (no submission time, not marked late)")


def _moment(value: object, zone: ZoneInfo, where: str) -> datetime:
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=zone)
    if isinstance(value, date):      # a day: due at its end
        return datetime.combine(value, time(23, 59, 59), zone)
    raise DeadlinesError(f"{where}: a date and time is wanted (2026-10-05T23:59:00), "
                         f"not {value!r}")


def _policy(value: object, where: str) -> Policy:
    if value == "zero":
        return Policy(zero=True)
    if value == "none":
        return ON_TIME
    if not isinstance(value, dict):
        raise DeadlinesError(f"{where}: a table or \"zero\" or \"none\", not {value!r}")
    unknown = set(value) - {"per_day", "last_day", "grace_minutes"}
    if unknown:
        raise DeadlinesError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    per_day = value.get("per_day", 0.0)
    last_day = value.get("last_day")
    grace = value.get("grace_minutes", 0)
    if not isinstance(per_day, int | float) or not 0 <= per_day <= 1:
        raise DeadlinesError(f"{where}.per_day: a fraction between 0 and 1, not {per_day!r}")
    if last_day is not None and (not isinstance(last_day, int) or last_day < 0):
        raise DeadlinesError(f"{where}.last_day: a whole number of days, not {last_day!r}")
    if not isinstance(grace, int) or grace < 0:
        raise DeadlinesError(f"{where}.grace_minutes: whole minutes, not {grace!r}")
    return Policy(float(per_day), last_day, False, grace)


_ASSIGNMENT_KEYS = {"due", "policy", "extensions", "excused", "canvas_late_days",
                    "gradings_per_hour", "gradings_in_all", "counts"}


def parse(text: str, origin: str = DEADLINES_FILE) -> Deadlines:
    """The deadlines a ``deadlines.toml`` text sets; refuses anything it does not know."""
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise DeadlinesError(f"{origin}: {error}") from error
    unknown = set(data) - {"timezone", "policies", "assignments"}
    if unknown:
        raise DeadlinesError(f"{origin}: unknown key(s) {', '.join(sorted(unknown))}")
    try:
        zone = ZoneInfo(data.get("timezone", "UTC"))
    except (ZoneInfoNotFoundError, ValueError) as error:
        raise DeadlinesError(f"{origin}: timezone {data.get('timezone')!r} is not an IANA "
                             "time zone (Europe/Berlin, Asia/Shanghai)") from error
    policies = {name: _policy(value, f"{origin}: policies.{name}")
                for name, value in data.get("policies", {}).items()}
    assignments = {}
    for name, entry in data.get("assignments", {}).items():
        where = f"{origin}: assignments.{name}"
        unknown = set(entry) - _ASSIGNMENT_KEYS
        if unknown:
            raise DeadlinesError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
        policy_name = entry.get("policy", "none")
        if isinstance(policy_name, str) and policy_name in policies:
            policy = policies[policy_name]
        elif policy_name in ("zero", "none") or isinstance(policy_name, dict):
            policy = _policy(policy_name, f"{where}.policy")
        else:
            raise DeadlinesError(f"{where}.policy: {policy_name!r} is not a policy of "
                                 "[policies], nor \"zero\" or \"none\"")
        excused = entry.get("excused", [])
        if not isinstance(excused, list) or not all(isinstance(s, str) for s in excused):
            raise DeadlinesError(f"{where}.excused: a list of student ids")
        late_days = entry.get("canvas_late_days", 1)
        if not isinstance(late_days, int) or late_days < 0:
            raise DeadlinesError(f"{where}.canvas_late_days: a whole number of days")
        limits = {}
        for key in ("gradings_per_hour", "gradings_in_all"):
            value = entry.get(key)
            if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                      or value < 1):
                raise DeadlinesError(f"{where}.{key}: a whole number, at least 1, not {value!r}")
            limits[key] = value
        counts = entry.get("counts", LAST)
        if counts not in COUNTS:
            raise DeadlinesError(f"{where}.counts: \"last\" or \"best\", not {counts!r}")
        assignments[name] = Deadline(
            _moment(entry["due"], zone, f"{where}.due") if "due" in entry else None,
            policy,
            {student: _moment(value, zone, f"{where}.extensions.{student}")
             for student, value in entry.get("extensions", {}).items()},
            frozenset(excused), late_days, **limits, counts=counts)
    return Deadlines(zone, assignments, True)


def load(course: Course) -> Deadlines:
    """The course's deadlines (none, and every submission on time, without the file)."""
    path: Path = course.root / DEADLINES_FILE
    if not path.exists():
        return Deadlines(ZoneInfo("UTC"))
    return parse(path.read_text(encoding="utf-8"), str(path))
