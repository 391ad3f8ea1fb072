"""The supervisor's clock is sized on the fresh runs the executor is set to allow, read from
the settings a submission is graded with (not from the executor's default)."""

from __future__ import annotations

from autograder.batch import supervise
from autograder.batch.supervise import STARTUP_ALLOWANCE, wall_clock
from autograder.course import Course
from autograder.submission import settings
from autograder.submission.execute import ExecuteSurvivingCrashes
from tests.conftest import REPO

COURSE = Course(REPO)


def test_the_clock_allows_every_fresh_run_the_executor_is_set_to_allow():
    runs = ExecuteSurvivingCrashes.max_fresh_runs.default_value
    assert wall_clock(COURSE, 60) == 60 * (runs + 2) + STARTUP_ALLOWANCE


def test_a_configured_number_of_fresh_runs_reaches_the_clock(monkeypatch):
    course_settings = settings.configure

    def configure(c, root, timeout=60):
        c = course_settings(c, root, timeout=timeout)
        c.ExecuteSurvivingCrashes.max_fresh_runs = 11
        return c

    monkeypatch.setattr(settings, "configure", configure)
    assert settings.max_fresh_runs(COURSE, 60) == 11
    assert supervise.wall_clock(COURSE, 60) == 60 * 13 + STARTUP_ALLOWANCE
