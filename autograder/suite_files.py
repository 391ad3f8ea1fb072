"""The grader's own files in an assignment's source folder: never released, never shown.

Kept apart from :mod:`autograder.hidden` (which imports torch) so that what only needs
their names — the release, nbgrader's settings — starts quickly.
"""

SUITE_FILE = "hidden_tests.py"        # the hidden test cases and their references
HELPERS_FILE = "probe_helpers.py"     # optional: callables both sides share (no answers)
