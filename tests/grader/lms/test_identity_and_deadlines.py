"""Who handed a file in, as each LMS names it; unique student ids; the late policy."""

from __future__ import annotations

import pytest

from autograder.lms.deadlines import DeadlinesError, parse
from autograder.lms.handed_in import CANVAS, MOODLE, from_canvas, from_moodle
from autograder.lms.roster import Roster

DEADLINES = """
timezone = "Asia/Shanghai"

[policies]
standard = { per_day = 0.10, last_day = 7, grace_minutes = 15 }
strict = "zero"

[assignments.attention-scoring]
due = 2026-10-05T23:59:00
policy = "standard"
extensions = { "smithjohn-67890" = 2026-10-08T23:59:00 }
excused = ["doejane"]

[assignments.seq2seq-attention]
due = 2026-10-12T23:59:00+00:00
policy = "strict"
canvas_late_days = 2
"""


@pytest.mark.parametrize("name, user, late, attachment, file, prefix", [
    ("smithjohn_12345_777_attention-scoring.ipynb", "12345", False, "777",
     "attention-scoring.ipynb", "smithjohn_12345_777_"),
    ("smithjohn_LATE_67890_778_attention-scoring-1.ipynb", "67890", True, "778",
     "attention-scoring-1.ipynb", "smithjohn_LATE_67890_778_"),
    ("李伟_45678_9_attention-scoring.ipynb", "45678", False, "9", "attention-scoring.ipynb",
     "李伟_45678_9_"),
    ("LATE_anon_x7Kq2_812_attention-scoring.ipynb", "anon_x7Kq2", True, "812",
     "attention-scoring.ipynb", "LATE_anon_x7Kq2_812_"),
])
def test_canvas_file_names(name, user, late, attachment, file, prefix):
    handed = from_canvas(name)
    assert (handed.lms, handed.user, handed.late, handed.attachment, handed.file,
            handed.prefix) == (CANVAS, user, late, attachment, file, prefix)


@pytest.mark.parametrize("path", [
    "Wei Li_101_assignsubmission_file/attention-scoring.ipynb",        # Moodle 4.1 and later
    "Wei Li_101_assignsubmission_file_/attention-scoring.ipynb",       # before 4.1
    "Wei Li_101_assignsubmission_file_attention-scoring.ipynb",        # without folders
])
def test_moodle_paths(path):
    handed = from_moodle(path)
    assert (handed.lms, handed.user, handed.name, handed.file, handed.prefix) == (
        MOODLE, "101", "Wei Li", "attention-scoring.ipynb", "Wei Li_101_assignsubmission_file_")


def test_not_lms_names():
    assert from_canvas("alice_notes_attention-scoring.ipynb") is None
    assert from_moodle("alice/attention-scoring.ipynb") is None


def test_two_people_of_one_name_are_two_students_whatever_the_order(tmp_path):
    wanted = {"canvas:12345": (["canvas:12345"], "smithjohn", "12345"),
              "canvas:67890": (["canvas:67890"], "smithjohn", "67890"),
              "canvas:23456": (["canvas:23456"], "doejane", "23456")}
    ids, notes = Roster(tmp_path / "r.json").allocate(wanted, set())
    reversed_ids, _ = Roster(tmp_path / "r.json").allocate(dict(reversed(wanted.items())), set())
    assert ids == reversed_ids == {"canvas:12345": "smithjohn-12345",
                                   "canvas:67890": "smithjohn-67890",
                                   "canvas:23456": "doejane"}
    assert len(notes) == 2 and all("smithjohn" in n for n in notes)


def test_a_known_identity_keeps_its_id_and_a_new_namesake_gets_another(tmp_path):
    roster = Roster(tmp_path / "r.json")
    roster.remember("smithjohn", CANVAS, "smithjohn", ["canvas:12345"])
    ids, _ = roster.allocate({"canvas:12345": (["canvas:12345"], "smithjohn", "12345"),
                              "canvas:67890": (["canvas:67890"], "smithjohn", "67890")}, set())
    assert ids == {"canvas:12345": "smithjohn", "canvas:67890": "smithjohn-67890"}
    # A student folder of that name (collected another way) is never merged either.
    ids, _ = Roster(tmp_path / "s.json").allocate(
        {"canvas:1": (["canvas:1"], "alice", "1")}, {"alice"})
    assert ids == {"canvas:1": "alice-1"}
    # A name in another script: the LMS's number.
    ids, _ = Roster(tmp_path / "t.json").allocate({"canvas:5": (["canvas:5"], "", "5")}, set())
    assert ids == {"canvas:5": "student-5"}


# The late-policy table of the closing note: per_day 0.10, last_day 7, 15 minutes' grace.
@pytest.mark.parametrize("submitted, days, credit", [
    ("2026-10-05T23:59:00", 0, 1.0),
    ("2026-10-06T00:14:00", 0, 1.0),      # within the grace
    ("2026-10-06T00:15:00", 1, 0.9),      # a started day counts
    ("2026-10-07T00:15:00", 2, 0.8),
    ("2026-10-12T23:59:00", 7, 0.3),
    ("2026-10-13T00:30:00", 8, 0.0),      # after the last day: nothing
    ("2026-10-05T18:30:00+02:00", 1, 0.9),   # an offset: 00:30 in Shanghai
])
def test_per_day_policy(submitted, days, credit):
    late = parse(DEADLINES).lateness("attention-scoring", "someone", submitted)
    assert (late.days, late.credit) == (days, pytest.approx(credit))
    assert late.final(10.0) == pytest.approx(10 * credit)


def test_extensions_excused_flags_and_zero():
    deadlines = parse(DEADLINES)
    assert deadlines.lateness("attention-scoring", "smithjohn-67890",
                              "2026-10-08T23:00:00").days == 0          # extended
    assert deadlines.lateness("attention-scoring", "smithjohn-67890",
                              "2026-10-09T23:00:00").credit == pytest.approx(0.9)
    assert deadlines.lateness("attention-scoring", "doejane", "2026-11-30T00:00:00").excused
    flagged = deadlines.lateness("attention-scoring", "a", late_flag=True)
    assert (flagged.days, flagged.credit, flagged.flagged) == (1, pytest.approx(0.9), True)
    strict = deadlines.lateness("seq2seq-attention", "a", late_flag=True)
    assert (strict.days, strict.credit) == (2, 0.0)
    assert deadlines.lateness("seq2seq-attention", "a", "2026-10-13T07:59:00+08:00").credit == 1
    assert deadlines.lateness("multihead-attention", "a", "2030-01-01T00:00:00").credit == 1
    assert deadlines.lateness("attention-scoring", "a").days == 0      # no time, no flag


@pytest.mark.parametrize("text, words", [
    ('timezone = "Mars/Olympus"', "not an IANA time zone"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\npolicy = \"lenient\"", "assignments.a.policy"),
    ("[policies]\np = { per_day = 1.5 }", "policies.p.per_day"),
    ("[assignments.a]\ndue = \"tomorrow\"", "assignments.a.due"),
    ("[assignments.a]\ndeadline = 2026-10-05", "unknown key"),
    ("[assignments.a]\ndue = 2026-10-05T23:59:00\nextensions = { x = 5 }",
     "assignments.a.extensions.x"),
    ("[assignments.a\n", "deadlines.toml"),
])
def test_a_wrong_deadlines_file_is_refused_naming_the_key(text, words):
    with pytest.raises(DeadlinesError, match=words.replace(".", r"\.")):
        parse(text)
