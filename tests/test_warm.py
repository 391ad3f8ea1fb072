"""Grading processes forked warm, or started cold: same interface, same isolation."""

from __future__ import annotations

import os

import pytest

from autograder.warm import GradingProcess


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_a_failing_worker_reports_its_exit_code_and_message(tmp_path, warm):
    log = tmp_path / "worker.log"
    process = GradingProcess(["--student", "s"], tmp_path, log, warm=warm)
    assert process.wait(timeout=120) == 2
    process.kill()
    assert "the following arguments are required: --root" in log.read_text()


@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_kill_ends_a_running_grading_and_reaps_it(tmp_path, warm):
    process = GradingProcess(["--student", "s"], tmp_path, tmp_path / "worker.log", warm=warm)
    process.kill()
    assert not os.path.exists(f"/proc/{process.pid}")
