"""Defaults every layer agrees on, importable before anything heavy (the command line
starts the grading fork server before it imports nbgrader: see :mod:`autograder.batch`)."""

DEFAULT_TIMEOUT = 120   # seconds a notebook may run when graded (one run of it)
