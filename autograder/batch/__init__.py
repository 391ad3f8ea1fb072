"""The batch layer: many submissions graded at once, each supervised, one writer.

* :mod:`.submissions` — which submissions there are and which need grading, in what order;
* :mod:`.cluster` — the Dask cluster they are graded on;
* :mod:`.supervise` — one submission in a grading process of its own, graded again if
  anything abnormal happened, never allowed to stop the batch;
* :mod:`.forkserver` and :mod:`.preload` — grading processes forked warm from a server
  that imported the grader and rehearsed the batch once;
* :mod:`.recorder` — the one writer of the gradebook and ``autograded/``.

It runs :mod:`autograder.submission` in its grading processes and imports nothing above it.
"""
