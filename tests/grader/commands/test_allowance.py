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
