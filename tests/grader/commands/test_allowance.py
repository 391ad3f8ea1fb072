"""The limits on official gradings on the hub: in any hour, and in all."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from autograder.commands.allowance import Ledger
from autograder.lms.deadlines import Deadline

T = datetime(2026, 10, 5, 12, 0, tzinfo=UTC)


def test_hourly_window_and_total(course):
    ledger = Ledger(course)
    limits = Deadline(gradings_per_hour=2, gradings_in_all=3)
    assert ledger.allowance(limits, "a", "x", T).allowed
    ledger.record("a", "x", T)
    ledger.record("a", "x", T + timedelta(minutes=10))
    blocked = ledger.allowance(limits, "a", "x", T + timedelta(minutes=20))
    assert not blocked.allowed and blocked.next_at == T + timedelta(hours=1)
    assert (blocked.used_hour, blocked.used_all) == (2, 2)
    assert ledger.allowance(limits, "a", "x", T + timedelta(hours=1, seconds=1)).allowed
    assert ledger.allowance(limits, "b", "x", T).allowed          # per student
    assert ledger.allowance(limits, "a", "y", T).allowed          # per assignment
    ledger.record("a", "x", T + timedelta(hours=2))
    spent = Ledger(course).allowance(limits, "a", "x", T + timedelta(days=1))   # kept on disk
    assert spent.exhausted and not spent.allowed and spent.next_at is None
    free = ledger.allowance(Deadline(), "a", "x", T + timedelta(minutes=20))
    assert free.allowed and not free.limited


def test_which_grading_counts_is_last_unless_the_course_says_best():
    from autograder.lms.deadlines import DeadlinesError, parse

    deadlines = parse('[assignments.a]\ncounts = "best"\n[assignments.b]\ngradings_in_all = 2\n')
    assert deadlines.of("a").counts == "best"
    assert deadlines.of("b").counts == "last" and deadlines.of("c").counts == "last"
    try:
        parse('[assignments.a]\ncounts = "highest"\n')
    except DeadlinesError as error:
        assert "assignments.a.counts" in str(error)
    else:
        raise AssertionError("an unknown choice was taken")


def test_the_best_attempt_is_kept_and_put_back_whole(course):
    """Attempts keep the submission as it was graded; the best is the one with the most
    points from the tests, the latest of equals; putting it back replaces ``submitted/``
    whole, with the record saying which arrival was taken last."""
    from autograder.commands.attempts import attempts_of, best, counting, keep, put_back

    submitted = course.submitted / "lee" / "x"
    submitted.mkdir(parents=True)
    kept = []
    for name, score, text in [("1-first", 14.0, "good"), ("2-second", 9.0, "worse"),
                              ("3-third", 14.0, "good again")]:
        for old in submitted.iterdir():
            old.unlink()
        (submitted / "x.ipynb").write_text(text)
        (submitted / f"{name}.txt").write_text("only in this attempt")
        kept.append(keep(course, "lee", "x", name, f"2026-10-05T12:0{name[0]}:00+00:00",
                         score, 14.0))
    assert [best(kept[:n]).folder.name for n in (1, 2, 3)] == ["1-first", "1-first", "3-third"]
    assert [a.score for a in attempts_of(course, "lee", "x")] == [14.0, 9.0, 14.0]
    told = counting(kept[1], kept[0])
    assert not told.this_counts and (told.score, told.best_score) == (9, 14)
    assert told.best_arrived == "2026-10-05 12:01"
    assert counting(kept[2], kept[2]).this_counts
    put_back(course, "lee", "x", kept[0], (".record.json", '{"counts": "1-first"}'))
    assert sorted(p.name for p in submitted.iterdir()) == [".record.json", "1-first.txt",
                                                           "x.ipynb"]
    assert (submitted / "x.ipynb").read_text() == "good"
    assert best([]) is None
