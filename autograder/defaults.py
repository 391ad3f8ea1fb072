"""Defaults the command line needs before it imports nbgrader (so that it can start the
grading fork server first, see :mod:`autograder.warm`)."""

DEFAULT_TIMEOUT = 120   # seconds a notebook may run when graded (one run; see Execute…)
