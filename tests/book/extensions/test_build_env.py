"""book_build.extensions.build_env: the notebooks' kernels know the book is being built."""

from __future__ import annotations

import os

from attention_course.progress import BUILD_VARIABLE


def test_the_build_sets_the_variable_every_kernel_inherits(build, monkeypatch):
    monkeypatch.delenv(BUILD_VARIABLE, raising=False)
    built = build({"index.rst": "Page\n====\n\nText.\n"}, ["book_build.extensions.build_env"])
    assert built.error is None, built.warnings
    assert os.environ[BUILD_VARIABLE] == "1"
