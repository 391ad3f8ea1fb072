"""Grades back to the LMS's gradebook over LTI 1.3 (AGS), and the class list from it (NRPS).

The gradebook is the source of truth. :func:`sync` makes, for every graded submission of a
student the LMS knows, the score its line item should hold — the score after the course's
late policy (:mod:`autograder.lms.deadlines`), out of the assignment's points,
``activityProgress: Completed``, and ``gradingProgress: PendingManual`` while an answer
awaits a person's grade, ``FullyGraded`` once none does — and sends the ones the platform
was not sent yet, or not as they stand (:mod:`autograder.lms.lti.ledger`). One line item
per assignment, tagged with its name, made on the platform when it has none.

Who is who: the platform's members (NRPS) are matched to the course's students by an
identity the course's roster already holds for them (:mod:`autograder.lms.roster`: their
LTI user id from an earlier sync or launch, or their e-mail from the LMS's own files);
a member the course has never seen is added with an id of their own, never merged with
another student. A student without an LTI identity is reported, and their grade sent
once the platform lists them.

``serve`` calls :func:`sync` after every round (an excused submission is not sent: the
LMS keeps whatever it has); ``export --lti-sync`` calls it against the platform's own
results, sending whatever the platform lacks. Nothing here stops grading: a failure is
reported and tried again.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from ..course import Course
from ..lms.lti.keys import ensure_private_key
from ..lms.lti.ledger import Ledger
from ..lms.lti.services import LEARNER, Platform, PlatformError
from ..lms.lti.settings import LtiSettings
from ..lms.roster import LTI_KEY, Roster, email_key, lti_key, safe_id
from .export import final_score, gradebook_scores, graded


@dataclass
class SyncReport:
    sent: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)        # not taken: tried again later
    unknown: list[str] = field(default_factory=list)     # no LTI identity yet
    notes: list[str] = field(default_factory=list)

    def lines(self, unknown: bool = True) -> list[str]:
        """What happened, a line each (``unknown``: with the students the LMS's class list
        does not have yet)."""
        return ([f"sent to the LMS: {line}" for line in self.sent]
                + [f"kept, to send again: {line}" for line in self.kept]
                + [f"not in the LMS's class list (sent once it is): {line}"
                   for line in (self.unknown if unknown else [])] + self.notes)


def platform_for(settings: LtiSettings) -> Platform:
    return Platform(settings, ensure_private_key(settings.private_key))


def lti_user(roster: Roster, student: str) -> str | None:
    """The student's LTI user id, if the roster knows it."""
    keys = roster.students.get(student, {}).get("keys", [])
    found = sorted(key[len(LTI_KEY):] for key in keys if key.startswith(LTI_KEY))
    return found[0] if len(found) == 1 else None


def _is_learner(member: dict) -> bool:
    return any(role == LEARNER or role.endswith("#Learner") or role == "Learner"
               for role in member.get("roles", []))


def refresh_roster(course: Course, platform: Platform, report: SyncReport) -> Roster:
    """The roster with the platform's learners in it (each by their LTI user id)."""
    try:
        members = [m for m in platform.members() if _is_learner(m)
                   and m.get("status", "Active") == "Active" and m.get("user_id")]
    except PlatformError as error:
        report.notes.append(f"the LMS's class list could not be read: {error}")
        return Roster.of(course)
    wanted = {}
    for member in members:
        keys = [lti_key(str(member["user_id"]))]
        if member.get("email"):
            keys.append(email_key(member["email"]))
        wanted[lti_key(str(member["user_id"]))] = (keys, safe_id(member.get("name", "")),
                                                     safe_id(str(member["user_id"]))[:12])
    taken = {folder.name for folder in course.submitted.glob("*") if folder.is_dir()}
    with Roster.updating(course) as roster:
        ids, notes = roster.allocate(wanted, taken)
        report.notes.extend(notes)
        for member in members:
            identity = lti_key(str(member["user_id"]))
            roster.remember(ids[identity], "lti", member.get("name", ""), wanted[identity][0],
                            member.get("email", ""))
    return roster


def wanted_score(result: dict) -> dict | None:
    """The score object (without ``userId`` and ``timestamp``) a graded submission's line
    item should hold; None if excused."""
    final = final_score(result)
    if final is None:
        return None
    pending = any(cell.get("needs_manual_grade") for cell in result["cells"].values())
    score = {"scoreGiven": round(float(final), 4), "scoreMaximum": float(result["max_score"]),
             "activityProgress": "Completed",
             "gradingProgress": "PendingManual" if pending else "FullyGraded"}
    if "late" in result and result["late"]["credit"] < 1.0:
        score["comment"] = f"late policy: {result['late']['basis']}; credit " \
                           f"{result['late']['credit']:.0%}"
    return score


def _same(sent: dict, score: dict) -> bool:
    return {k: v for k, v in sent.items() if k not in ("timestamp", "userId")} == score


def sync(course: Course, platform: Platform, assignments: list[str] | None = None,
         against_lms: bool = False, now: datetime | None = None) -> SyncReport:
    """Send the platform every score it lacks (see the module); ``against_lms``: compare
    with the platform's own results rather than with what this course sent it."""
    report = SyncReport()
    roster = Roster.of(course)
    scores = gradebook_scores(course)["students"]
    to_send = [(student, assignment, result, score)
               for student, by_assignment in sorted(scores.items())
               for assignment, result in sorted(by_assignment.items())
               if (assignments is None or assignment in assignments)
               and graded(course, student, assignment)
               and (score := wanted_score(result)) is not None]
    if any(lti_user(roster, student) is None for student, *_ in to_send):
        roster = refresh_roster(course, platform, report)   # the class list, when needed
    with Ledger.updating(course) as ledger:      # one sync at a time
        lms_results: dict[str, dict[str, dict]] = {}
        for student, assignment, result, score in to_send:
            user = lti_user(roster, student)
            if user is None:
                report.unknown.append(f"{student} {assignment}")
                continue
            moment = now or datetime.now(UTC)
            entry = ledger.entry(student, assignment)
            try:
                line_item = ledger.line_items.get(assignment) or platform.line_item(
                    assignment, assignment, float(result["max_score"]))
                ledger.line_items[assignment] = line_item
                if against_lms:
                    if line_item not in lms_results:
                        try:
                            lms_results[line_item] = platform.results(line_item)
                        except PlatformError as error:
                            if error.status != 404:
                                raise
                            # The line item was deleted in the LMS: found or made again.
                            del ledger.line_items[assignment]
                            line_item = ledger.line_items[assignment] = platform.line_item(
                                assignment, assignment, float(result["max_score"]))
                            lms_results[line_item] = platform.results(line_item)
                    held = lms_results[line_item].get(user)
                    if held is not None and entry is not None and entry["delivered"] \
                            and entry["user_id"] == user and _same(entry["score"], score) \
                            and held.get("resultScore") == score["scoreGiven"] \
                            and held.get("resultMaximum") == score["scoreMaximum"]:
                        continue
                elif entry is not None and entry["user_id"] == user and \
                        _same(entry["score"], score) and entry["delivered"]:
                    continue
                elif not ledger.due(student, assignment, moment):
                    report.kept.append(f"{student} {assignment}: next try at "
                                       f"{entry['next_try']}")
                    continue
            except PlatformError as error:
                report.kept.append(f"{student} {assignment}: {error}")
                continue
            payload = {"userId": user, **score,
                       "timestamp": ledger.next_timestamp(student, assignment, moment)}
            try:
                try:
                    platform.post_score(line_item, payload)
                except PlatformError as error:
                    if error.status != 404:
                        raise
                    ledger.line_items.pop(assignment, None)   # deleted in the LMS: made again
                    line_item = ledger.line_items[assignment] = platform.line_item(
                        assignment, assignment, float(result["max_score"]))
                    platform.post_score(line_item, payload)
            except PlatformError as error:
                ledger.failed(student, assignment, user, payload, str(error), moment)
                report.kept.append(f"{student} {assignment}: {error}")
            else:
                ledger.sent(student, assignment, user, payload)
                report.sent.append(f"{student} {assignment} {score['scoreGiven']:g} / "
                                   f"{score['scoreMaximum']:g} {score['gradingProgress']}")
            ledger.save()
    return report
