"""Hanging and crashing submissions: graded as far as possible, with a reason, in one batch."""

from __future__ import annotations

import pytest

from autograder.commands.grade import grade
from autograder.commands.report import write_report
from autograder.course.outcome import NOT_RUN, PASSED, TIMED_OUT
from tests.conftest import filled, make_course, submit, visible_text

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("grading-limits")

HANGS_IN_DOT_SCORE = '''
def dot_score(query, keys):
    while True:
        pass
'''
# Every cell computes for 3 s: each is within its limit (24 s / 4 = 6 s), the notebook is not.
SLOW_EVERYWHERE = '''
import time

from IPython import get_ipython


def spin(info):
    start = time.process_time()
    while time.process_time() - start < 3:
        pass


get_ipython().events.register("pre_run_cell", spin)


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''
# Every cell waits 2 s without computing: only the wall-clock limit, 3 x 8 s, stops it.
WAITS_EVERYWHERE = '''
import time

from IPython import get_ipython

get_ipython().events.register("pre_run_cell", lambda info: time.sleep(2))


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''

# The kernel dies once, the first time this cell runs (as a crowded machine may kill it):
# not reproduced, so not the code's doing.
DIES_ONCE = '''
import os

if not os.path.exists("died-once"):
    open("died-once", "w").close()
    os._exit(1)


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)
'''

KILLS_ITS_KERNEL = '''
import os


def dot_score(query, keys):
    os._exit(1)
'''


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory):
    course = make_course(tmp_path_factory.mktemp("limits") / "course")
    submit(course, "hangs", filled(course, HANGS_IN_DOT_SCORE))
    submit(course, "crashes", filled(course, KILLS_ITS_KERNEL))
    submit(course, "correct", filled(course))
    submit(course, "slow", filled(course, SLOW_EVERYWHERE))
    submit(course, "dies-once", filled(course, DIES_ONCE))
    return {o.student: o for o in grade(course, jobs=2, timeout=24, progress=False)}


@pytest.fixture(scope="module")
def waiting(tmp_path_factory):
    """A notebook that waits, graded with an 8 s limit (a wall-clock limit of 24 s)."""
    course = make_course(tmp_path_factory.mktemp("waiting") / "course")
    submit(course, "waits", filled(course, WAITS_EVERYWHERE))
    (outcome,) = grade(course, jobs=1, timeout=8, progress=False)
    return course, outcome


def test_a_hanging_test_times_out_and_the_rest_is_graded(outcomes):
    cells = {c.grade_id: c for c in outcomes["hangs"].cells}
    assert cells["test-dot-score"].status == TIMED_OUT
    assert cells["test-dot-score"].score == 0
    assert cells["test-general-score"].status == PASSED          # does not call dot_score
    assert 0 < outcomes["hangs"].score < 14


def test_a_dead_kernel_costs_only_the_tests_it_prevents(outcomes):
    crashed = outcomes["crashes"]
    cells = {c.grade_id: c for c in crashed.cells}
    assert cells["test-dot-score"].status == NOT_RUN
    # Charged only once reproduced, with what the grader saw: os._exit(1) gives status 1.
    assert "killed the kernel (exit status 1), twice" in cells["test-dot-score"].message
    # Tests that never call dot_score are graded in the re-run notebook...
    assert cells["test-general-score"].status == PASSED
    assert cells["test-masked-softmax-mask"].status == PASSED
    # ...and every test that calls it kills the kernel again and is lost.
    assert cells["test-scaled-dot-score"].score == 0
    assert 0 < crashed.score < 14


def test_a_death_that_does_not_happen_again_costs_nothing(outcomes):
    survivor = outcomes["dies-once"]
    assert survivor.score == 14, survivor.cells
    # Something abnormal happened: it was graded twice, and each time the cell ran again.
    assert len(survivor.attempts) == 2
    for attempt in survivor.attempts:
        assert any("killed the kernel (exit status 1)" in event for event in attempt["abnormal"])


def test_a_notebook_slow_everywhere_is_stopped_at_its_time_limit(outcomes):
    cells = {c.grade_id: c for c in outcomes["slow"].cells}
    assert cells["test-dot-score"].status == PASSED                # 3 s of its 6 s
    last = cells["test-attend-mask-and-score"]
    assert last.status == TIMED_OUT and "time limit of 24 s of computing" in last.message, last
    assert 0 < outcomes["slow"].score < 14


def test_a_notebook_that_only_waits_is_stopped_by_the_clock(waiting):
    _, waiting = waiting
    cells = {c.grade_id: c for c in waiting.cells}
    assert cells["test-dot-score"].status == PASSED                # 2 s of its 15 s
    last = cells["test-attend-mask-and-score"]
    assert last.status == TIMED_OUT and "time limit of 24 s before" in last.message, last
    assert 0 < waiting.score < 14
    # A wall-clock limit may be the machine's doing: the notebook was graded twice.
    assert len(waiting.attempts) == 2 and all(a["abnormal"] for a in waiting.attempts)


def test_a_cell_that_computes_too_long_is_stopped_by_its_cpu_time(outcomes):
    cells = {c.grade_id: c for c in outcomes["hangs"].cells}
    assert "computed for more than its limit of 6 s" in cells["test-dot-score"].message
    # Computing limits do not depend on the load: graded once.
    assert outcomes["hangs"].attempts == [] and outcomes["slow"].attempts == []


def test_the_rest_of_the_batch_is_unaffected(outcomes):
    assert outcomes["correct"].score == 14


def test_the_report_shows_both_attempts_of_a_submission_graded_twice(waiting):
    course, outcome = waiting
    page = visible_text(write_report(course, "attention-scoring").read_text())
    section = page[page.index("Graded twice"):page.index("Scores")]
    assert section.count("waits") == 2, section             # a row per attempt
    assert "was stopped by the wall clock" in section
    assert f"{outcome.score:g}" in section
