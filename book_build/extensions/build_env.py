"""Sphinx extension: tell the notebooks' kernels that the book is being built.

It sets :data:`attention_course.progress.BUILD_VARIABLE` in the build's environment, which
every kernel the build starts inherits, so that long work shows one summary line in the
page instead of a progress bar (:func:`attention_course.progress.progress`).
"""

from __future__ import annotations

import os

from sphinx.application import Sphinx

from attention_course.progress import BUILD_VARIABLE


def setup(app: Sphinx) -> dict:
    os.environ[BUILD_VARIABLE] = "1"
    return {"parallel_read_safe": True, "parallel_write_safe": True}
