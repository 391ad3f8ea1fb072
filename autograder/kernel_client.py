"""The grader's kernel client: ready as soon as the kernel is.

jupyter_client's ``wait_for_ready`` ends by draining the IOPub channel until nothing has
come for 0.2 s: a fixed 0.2 s for every kernel, an eighth of grading a small notebook.
nbclient does not need it (it reads only the IOPub messages of the request it sent), so
this client stops waiting once the kernel has answered ``kernel_info`` and IOPub has
delivered a message (ipykernel greets each subscriber), exactly as jupyter_client decides
the kernel is ready, without the drain.
"""

from __future__ import annotations

import time
from queue import Empty

from jupyter_client.asynchronous import AsyncKernelClient


class ReadyKernelClient(AsyncKernelClient):
    """:class:`~jupyter_client.asynchronous.AsyncKernelClient` without the IOPub drain."""

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
