"""The course's one record of who each student is in the LMS: ``lms-roster.json``.

``collect`` writes it; ``export`` and ``feedback`` read it to send grades and feedback back
to the same people. It lives in the course directory beside the gradebook, is created at
run time and never committed, and holds:

``students``
    ``{student id: {"lms", "name", "email", "keys"}}`` — the name exactly as the LMS wrote
    it, and the identities that are this student (``canvas:<user id>``,
    ``moodle:<assignment>:<participant id>``, ``email:<address>``, ``lti:<sub>`` for an
    LTI 1.3 platform's user).
``submissions``
    ``{student id: {assignment: {"lms", "user", "name", "prefix", "attachment", "late",
    "submitted_at", "files"}}}`` — what the LMS said of the collected submission:
    Canvas's user and attachment ids and ``LATE_`` flag, Moodle's participant id and
    submission time, the prefix the LMS gave its files, and ``{notebook: file name in the
    download}``.

A student id is derived from the LMS's name (``smithjohn``, ``jane-doe``) and is unique:
an identity the roster knows keeps its id; two new identities with the same name (two
John Smiths), or a name whose id another identity or a student folder already has,
become ``<name>-<user id>`` (``smithjohn-12345``, ``smithjohn-67890``). So ids never
depend on the order of a download, and no two people ever share one.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from ..course import Course
from ..course.records import locked, read_record, write_record

ROSTER_FILE = "lms-roster.json"
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def safe_id(raw: str) -> str:
    """A student id (a folder name) from an LMS's name: ASCII letters, digits, ``.-_``,
    anything else a hyphen. Empty (a name in another script) if nothing is left."""
    return _UNSAFE.sub("-", raw).strip("-.")


def canvas_key(user: str) -> str:
    return f"canvas:{user}"


def moodle_key(assignment: str, participant: str) -> str:
    return f"moodle:{assignment}:{participant}"


LTI_KEY = "lti:"        # an LTI 1.3 platform's user (its "sub"): lti:<sub>


def lti_key(user: str) -> str:
    return f"{LTI_KEY}{user}"


def email_key(email: str) -> str:
    return f"email:{email.strip().casefold()}"


@dataclass
class Roster:
    path: Path
    students: dict[str, dict] = field(default_factory=dict)
    submissions: dict[str, dict[str, dict]] = field(default_factory=dict)

    @classmethod
    def of(cls, course: Course) -> Roster:
        """The roster as it stands, to read (to change it: :meth:`updating`)."""
        path = course.root / ROSTER_FILE
        record = read_record(path)
        return cls(path, record.get("students", {}), record.get("submissions", {}))

    @classmethod
    @contextmanager
    def updating(cls, course: Course) -> Iterator[Roster]:
        """The roster, read under its lock and written back (if changed) before the lock is
        released: the hub, the grading service and ``collect`` change it, maybe at once
        (:mod:`~autograder.course.records`)."""
        path = course.root / ROSTER_FILE
        with locked(path):
            roster = cls.of(course)
            before = roster.as_record()
            yield roster
            if roster.as_record() != before:
                write_record(path, roster.as_record())

    def as_record(self) -> dict:
        return json.loads(json.dumps({"students": self.students,
                                      "submissions": self.submissions}))

    def owner(self, key: str) -> str | None:
        """The student an identity key belongs to."""
        for student, entry in self.students.items():
            if key in entry["keys"]:
                return student
        return None

    def owner_of_any(self, keys: list[str]) -> str | None:
        for key in keys:
            if (student := self.owner(key)) is not None:
                return student
        return None

    def allocate(self, wanted: dict[str, tuple[list[str], str, str]], taken: set[str]
                 ) -> tuple[dict[str, str], list[str]]:
        """Student ids for identities: ``wanted`` is ``{identity: (keys, name id, user)}``
        (``keys``: every key that identifies the person, ``name id``: the id the name
        gives, ``user``: the LMS's number). ``taken``: ids in use outside the roster.
        Returns ``({identity: student id}, notes)`` — a note for every name shared."""
        ids: dict[str, str] = {}
        new = {}
        for identity, (keys, base, user) in wanted.items():
            known = self.owner_of_any(keys)
            if known is not None:
                ids[identity] = known
            else:
                new[identity] = (base, user)
        used = set(self.students) | set(taken) | set(ids.values())
        names = Counter(base for base, _ in new.values())
        notes = []
        for identity, (base, user) in sorted(new.items()):
            alone = base and names[base] == 1 and base not in used
            student = base if alone else f"{base or 'student'}-{user}"
            number = 2
            while student in used:
                student, number = f"{base or 'student'}-{user}-{number}", number + 1
            used.add(student)
            ids[identity] = student
            if base and student != base:
                notes.append(f"{identity}: the id {base!r} is another person's too, so this "
                             f"student is {student!r}")
        return ids, notes

    def remember(self, student: str, lms: str, name: str, keys: list[str], email: str = ""
                 ) -> None:
        entry = self.students.setdefault(student, {"lms": lms, "name": name, "email": "",
                                                   "keys": []})
        entry["name"] = name or entry["name"]
        entry["email"] = email or entry["email"]
        entry["keys"] = sorted(set(entry["keys"]) | set(keys))

    def record(self, student: str, assignment: str, submission: dict) -> None:
        self.submissions.setdefault(student, {})[assignment] = submission

    def submission(self, student: str, assignment: str) -> dict | None:
        return self.submissions.get(student, {}).get(assignment)
