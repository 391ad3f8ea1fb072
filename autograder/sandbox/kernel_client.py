"""The grader's kernel client and manager: a kernel ready, and gone, as soon as it is.

jupyter_client loses time on fixed waits, each a sizeable part of grading a small notebook:

* ``wait_for_ready`` ends by draining the IOPub channel until nothing has come for 0.2 s.
  nbclient does not need it (it reads only the IOPub messages of the request it sent), so
  :class:`ReadyKernelClient` stops waiting once the kernel has answered ``kernel_info``
  and IOPub has delivered a message (ipykernel greets each subscriber), exactly as
  jupyter_client decides the kernel is ready, without the drain.
* The client connects before the kernel has made its sockets; ZeroMQ tries again every
  0.1 s by default, so the first answer came up to 0.1 s after the kernel could give it.
  The client's sockets try again every :data:`RECONNECT_MS` instead.
* Shutting a kernel down, the manager checks whether it has ended every 0.1 s;
  :class:`ReadyKernelManager` checks every :data:`EXIT_POLL_SECONDS`.
"""

from __future__ import annotations

import time
from queue import Empty

import zmq
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.manager import AsyncKernelManager

RECONNECT_MS = 5
EXIT_POLL_SECONDS = 0.005


class ReadyKernelClient(AsyncKernelClient):
    """:class:`~jupyter_client.asynchronous.AsyncKernelClient` without the IOPub drain,
    whose sockets connect again quickly."""

    def start_channels(self, *args, **kwargs) -> None:
        self.context.setsockopt(zmq.RECONNECT_IVL, RECONNECT_MS)   # for sockets made now
        super().start_channels(*args, **kwargs)

    async def _async_wait_for_ready(self, timeout: float | None = None) -> None:
        deadline = time.monotonic() + (float("inf") if timeout is None else timeout)
        while True:
            self.kernel_info()
            try:
                reply = await self.shell_channel.get_msg(timeout=1)
            except Empty:
                reply = None
            if reply is not None and reply["msg_type"] == "kernel_info_reply":
                try:        # IOPub connected? Otherwise ask again (as jupyter_client does)
                    await self.iopub_channel.get_msg(timeout=0.2)
                except Empty:
                    pass
                else:
                    self._handle_kernel_info_reply(reply)
                    return
            if not await self._async_is_alive():
                raise RuntimeError("Kernel died before replying to kernel_info")
            if time.monotonic() > deadline:
                raise RuntimeError(f"Kernel didn't respond in {timeout:.0f} seconds")

    wait_for_ready = _async_wait_for_ready


def exit_status(manager) -> int | None:
    """How the kernel process of ``manager`` ended: its exit status, minus the signal's
    number if a signal killed it (as :attr:`subprocess.Popen.returncode`), or None if it
    has not ended or cannot be known."""
    process = getattr(getattr(manager, "provisioner", None), "process", None)
    if process is None:
        return None
    try:
        return process.wait(timeout=1.0)      # it has ended, or is ending: nbclient saw it
    except Exception:   # noqa: BLE001 - still running, or not a Popen: nothing to say
        return None


class ReadyKernelManager(AsyncKernelManager):
    """:class:`~jupyter_client.manager.AsyncKernelManager` that sees a kernel end within
    milliseconds rather than at its next check a tenth of a second later."""

    async def _async_wait(self, pollinterval: float = 0.1) -> None:
        await super()._async_wait(pollinterval=min(pollinterval, EXIT_POLL_SECONDS))
