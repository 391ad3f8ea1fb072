"""nbgrader configuration of this course.

The repository root is the nbgrader course directory: assignments are written in
``solutions/`` (nbgrader's source directory) and released to ``exercises/`` (its release
directory). ``python -m autograder`` drives nbgrader with this configuration; running the
``nbgrader`` command from the repository root uses it too.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
if HERE not in sys.path:
    sys.path.insert(0, HERE)   # so that nbgrader can import the course's preprocessors

from autograder.submission.settings import configure  # noqa: E402

c = get_config()  # noqa: F821 -- provided by traitlets when it loads this file
configure(c, HERE)
