"""The course's JSON records changed by several processes at once: the roster (the hub
remembers a launch while the service reads the LMS's class list and an instructor collects)
and the LTI ledger (the service and ``export --lti-sync`` sending scores). Nobody's change is
lost; one sync waits for the other; a record is never seen half written."""

from __future__ import annotations

import multiprocessing
import os
import time

import pytest

from autograder.course import Course
from autograder.course.records import read_record, updating, write_record
from autograder.lms.lti.ledger import Ledger
from autograder.lms.roster import Roster

WRITERS, EACH = 3, 40


def _remember_many(root: str, writer: int, start) -> None:
    """One process remembering students one by one, each in an update of its own (the
    moment inside widened, as a hub's thread may be paused there)."""
    course = Course.at(root)
    start.wait()
    for number in range(EACH):
        with Roster.updating(course) as roster:
            roster.remember(f"w{writer}-{number}", "lti", f"Writer {writer} #{number}",
                            [f"lti:{writer}-{number}"])
            time.sleep(0.002)


def test_students_remembered_at_once_by_several_processes_are_all_kept(tmp_path):
    context = multiprocessing.get_context("fork")
    start = context.Event()
    writers = [context.Process(target=_remember_many, args=(str(tmp_path), w, start))
               for w in range(WRITERS)]
    for writer in writers:
        writer.start()
    start.set()
    for writer in writers:
        writer.join(timeout=120)
        assert writer.exitcode == 0
    roster = Roster.of(Course.at(tmp_path))
    assert len(roster.students) == WRITERS * EACH
    assert roster.owner("lti:2-39") == "w2-39"
    assert (roster.path.stat().st_mode & 0o777) == 0o600


def _hold_the_ledger(root: str, held, release) -> None:
    with Ledger.updating(Course.at(root)) as ledger:
        ledger.line_items["a1"] = "https://lms.example/items/1"
        held.set()
        release.wait(30)


def test_a_second_sync_waits_for_the_first_and_sees_what_it_sent(tmp_path):
    context = multiprocessing.get_context("fork")
    held, release = context.Event(), context.Event()
    first = context.Process(target=_hold_the_ledger, args=(str(tmp_path), held, release))
    first.start()
    assert held.wait(30)
    waited = context.Event()

    def second() -> None:
        with Ledger.updating(Course.at(tmp_path)) as ledger:
            waited.set()
            assert ledger.line_items == {"a1": "https://lms.example/items/1"}
    other = context.Process(target=second)
    other.start()
    time.sleep(1.0)
    assert not waited.is_set()            # the first sync still holds the ledger
    release.set()
    first.join(30)
    other.join(30)
    assert waited.is_set() and other.exitcode == 0 and first.exitcode == 0


def test_an_update_that_fails_or_changes_nothing_writes_nothing(tmp_path):
    record = tmp_path / "lms-roster.json"
    with updating(record) as data:
        data["students"] = {}
    assert read_record(record) == {"students": {}}
    written = record.stat().st_mtime_ns
    time.sleep(0.01)
    with updating(record) as data:
        pass
    assert record.stat().st_mtime_ns == written
    with pytest.raises(RuntimeError), updating(record) as data:
        data["students"]["x"] = {"keys": []}
        raise RuntimeError("stopped half way")
    assert read_record(record) == {"students": {}}


def test_a_record_is_replaced_whole_and_private(tmp_path):
    record = tmp_path / "lti-ledger.json"
    partial = tmp_path / "lti-ledger.json.partial"
    partial.write_text("left by a process killed while writing")
    os.chmod(partial, 0o644)
    write_record(record, {"scores": {"ada": {"a1": {"delivered": True}}}, "名": "中文"})
    assert read_record(record)["名"] == "中文"
    assert not partial.exists()
    assert (record.stat().st_mode & 0o777) == 0o600
    assert read_record(tmp_path / "none.json") == {}
