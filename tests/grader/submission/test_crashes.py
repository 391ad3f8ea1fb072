"""The executor's rule, on its own: a cell is charged with a kernel's death only when the
death is reproduced with that cell (autograder.submission.execute.Crashes)."""

from __future__ import annotations

from nbformat.v4 import new_code_cell, new_markdown_cell

from autograder.submission.execute import DIED, STUCK, Crashes
from autograder.submission.verdicts import KERNEL_DIED, KERNEL_STUCK

CODE, TEXT = new_code_cell("x = 1"), new_markdown_cell("text")


def test_one_death_is_only_suspected_and_the_same_again_is_charged():
    crashes = Crashes()
    assert crashes.charge(3, DIED, "killed the kernel (signal 9)", last_run=False)
    assert crashes.suspect == (3, DIED) and crashes.blamed == {}
    assert crashes.instead_of_running(3, CODE) is None          # it runs again
    assert crashes.charge(3, DIED, "killed the kernel (signal 9)", last_run=False)
    assert crashes.blamed == {3: (DIED, "killed the kernel (signal 9)")}
    assert crashes.suspect is None
    name, reason = crashes.instead_of_running(3, CODE)
    assert name == KERNEL_DIED and "twice in a row" in reason
    assert crashes.instead_of_running(4, CODE) is None


def test_a_death_elsewhere_or_of_another_kind_is_not_a_reproduction():
    crashes = Crashes()
    crashes.charge(3, DIED, "killed the kernel", last_run=False)
    crashes.charge(5, DIED, "killed the kernel", last_run=False)
    crashes.charge(5, STUCK, "did not stop", last_run=False)
    assert crashes.blamed == {} and crashes.suspect == (5, STUCK)
    crashes.charge(5, STUCK, "did not stop", last_run=False)
    assert crashes.instead_of_running(5, CODE)[0] == KERNEL_STUCK


def test_after_the_last_run_the_cell_and_every_code_cell_after_it_get_the_error():
    crashes = Crashes()
    assert crashes.charge(2, DIED, "killed the kernel", last_run=True)
    assert crashes.instead_of_running(1, CODE) is None
    name, reason = crashes.instead_of_running(2, CODE)
    assert name == KERNEL_DIED and "could not be run again" in reason
    assert "a cell before it" in crashes.instead_of_running(7, CODE)[1]
    assert crashes.instead_of_running(7, TEXT) is True            # left as it is
    assert not crashes.charge(2, DIED, "killed the kernel", last_run=True)   # give up
