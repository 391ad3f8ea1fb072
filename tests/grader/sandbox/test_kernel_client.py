"""The grader's kernel client is ready once the kernel answers, runs cells like
jupyter_client's, and says so when the kernel dies before answering; its sockets connect
again within milliseconds, and its manager looks for a kernel's end as often."""

from __future__ import annotations

import asyncio
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest
import zmq
from jupyter_client.kernelspec import KernelSpec
from jupyter_client.manager import AsyncKernelManager

from autograder.course import Course
from autograder.sandbox import kernelspec
from autograder.sandbox.kernel_client import (
    EXIT_POLL_SECONDS,
    RECONNECT_MS,
    ReadyKernelClient,
    ReadyKernelManager,
)
from autograder.submission import settings


def _run(coroutine_function):
    """Run it on an event loop of its own, in a thread of its own: another test may have
    left this thread's loop running."""
    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, coroutine_function()).result()


def _manager(argv: list[str]) -> AsyncKernelManager:
    km = AsyncKernelManager(client_class="autograder.sandbox.kernel_client.ReadyKernelClient")
    km._kernel_spec = KernelSpec(argv=argv, language="python", display_name="test")
    return km


async def _run_one_cell() -> list[str]:
    km = _manager([sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"])
    await km.start_kernel()
    client = km.client()
    assert isinstance(client, ReadyKernelClient)
    client.start_channels()
    try:
        assert client.shell_channel.socket.getsockopt(zmq.RECONNECT_IVL) == RECONNECT_MS
        await client.wait_for_ready(timeout=60)
        printed = []
        reply = await client.execute_interactive(
            "print(6 * 7)", timeout=60,
            output_hook=lambda msg: printed.append(msg["content"].get("text", "")))
        assert reply["content"]["status"] == "ok"
        return printed
    finally:
        client.stop_channels()
        await km.shutdown_kernel(now=True)


def test_ready_client_runs_a_cell():
    assert "42\n" in _run(_run_one_cell)


async def _wait_for_a_dying_kernel() -> None:
    km = _manager([sys.executable, "-c", "import sys; sys.exit(3)", "{connection_file}"])
    await km.start_kernel()
    client = km.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=30)
    finally:
        client.stop_channels()
        await km.shutdown_kernel(now=True)


def test_a_kernel_that_dies_first_is_reported():
    with pytest.raises(RuntimeError, match="died before replying"):
        _run(_wait_for_a_dying_kernel)


def test_the_manager_looks_for_the_end_every_few_milliseconds(monkeypatch):
    answers, pauses = iter([True, True, False]), []

    async def alive(self):
        return next(answers)

    async def pause(seconds):
        pauses.append(seconds)

    monkeypatch.setattr(ReadyKernelManager, "_async_is_alive", alive)
    monkeypatch.setattr(asyncio, "sleep", pause)
    _run(lambda: ReadyKernelManager()._async_wait(pollinterval=0.1))   # jupyter_client's
    assert pauses == [EXIT_POLL_SECONDS, EXIT_POLL_SECONDS]


def test_graded_notebooks_use_them(tmp_path):
    kernel = kernelspec.install(tmp_path, tmp_path / "work")
    config = settings.sandboxed(Course.at(tmp_path), kernel, tmp_path)
    assert config.AsyncKernelManager.client_class == \
        "autograder.sandbox.kernel_client.ReadyKernelClient"
    assert config.Execute.kernel_manager_class is ReadyKernelManager
    assert config.Execute.shutdown_kernel == "immediate"
