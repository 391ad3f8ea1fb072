"""nbgrader configuration of this course.

The repository root is the nbgrader course directory: assignments are written in
``solutions/`` (nbgrader's source directory) and released to ``exercises/`` (its release
directory). ``python -m autograder`` drives nbgrader with this configuration; running the
``nbgrader`` command from the repository root uses it too, and so does nbgrader's formgrader
(``make formgrader``). The gradebook is ``gradebook.db`` here, or the database that
``$AUTOGRADER_DB`` names (as ``python -m autograder`` takes it: PostgreSQL for a team).
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)   # so that nbgrader can import the course's preprocessors

from autograder.submission.settings import configure  # noqa: E402

c = get_config()  # noqa: F821 -- provided by traitlets when it loads this file
configure(c, HERE)
# A setting given on the command line (--CourseDirectory.db_url) would lose to this file's:
# the environment is how the formgrader and nbgrader's commands reach the grader's gradebook.
if os.environ.get("AUTOGRADER_DB"):
    c.CourseDirectory.db_url = os.environ["AUTOGRADER_DB"]
