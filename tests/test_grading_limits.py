"""Hanging and crashing submissions: graded as far as possible, with a reason, in one batch."""

from __future__ import annotations

import pytest

from autograder.grading import grade
from autograder.outcome import NOT_RUN, PASSED, TIMED_OUT

from .conftest import filled, make_course, submit

# The module's tests share one graded batch: run them on one worker, so it is graded once.
pytestmark = pytest.mark.xdist_group("grading-limits")

HANGS_IN_DOT_SCORE = '''
def dot_score(query, keys):
    while True:
        pass
'''
# Every cell takes 3 s: each is within its limit (24 s / 4 = 6 s), the notebook is not.
SLOW_EVERYWHERE = '''
import time

from IPython import get_ipython

get_ipython().events.register("pre_run_cell", lambda info: time.sleep(3))


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
    return {o.student: o for o in grade(course, jobs=2, timeout=24, progress=False)}


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
    assert "kernel died" in cells["test-dot-score"].message
    # Tests that never call dot_score are graded in the re-run notebook...
    assert cells["test-general-score"].status == PASSED
    assert cells["test-masked-softmax-mask"].status == PASSED
    # ...and every test that calls it kills the kernel again and is lost.
    assert cells["test-scaled-dot-score"].score == 0
    assert 0 < crashed.score < 14


def test_a_notebook_slow_everywhere_is_stopped_at_its_time_limit(outcomes):
    cells = {c.grade_id: c for c in outcomes["slow"].cells}
    assert cells["test-dot-score"].status == PASSED                # 3 s of its 6 s
    last = cells["test-attend-mask-and-score"]
    assert last.status == TIMED_OUT and "time limit of 24 s" in last.message, last
    assert 0 < outcomes["slow"].score < 14


def test_the_rest_of_the_batch_is_unaffected(outcomes):
    assert outcomes["correct"].score == 14
