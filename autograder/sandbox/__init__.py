"""The sandbox layer: where a submission's code runs, confined, and how it is ended.

* :mod:`.bubblewrap` — the commands that start a confined kernel (or a kernel zygote) with
  bubblewrap and prlimit, and the :class:`~.bubblewrap.Limits` they set;
* :mod:`.kernelspec` — the Jupyter kernelspec nbgrader starts, cold or from a zygote;
* :mod:`.zygote` (the grader's side), :mod:`.zygote_server` (inside the sandbox) and
  :mod:`.zygote_client` (the kernelspec's command) — warm kernels forked per notebook;
* :mod:`.kernel_client` — the kernel manager and client nbgrader uses with them;
* :mod:`.kernel_time` — the kernel's CPU time and its wait for a core, from ``/proc``;
* :mod:`.reaping` and :mod:`.inside` — finding and killing whatever a submission started.

It knows nothing of nbgrader's pipeline or of the hidden tests; it imports only
:mod:`autograder.course`.
"""
