"""A first build starts the longest notebooks first (book_build.execute): every page the
build executes has a measured time, so that no long training is started last, keeping one
core busy alone while the other waits."""

from __future__ import annotations

import json

from book_build.execute import MEASURED_SECONDS, book_pages
from book_build.paths import ROOT


def test_every_executed_page_has_a_measured_time():
    measured = json.loads(MEASURED_SECONDS.read_text())
    pages = {str(path.relative_to(ROOT)) for path in book_pages(ROOT)}
    assert set(measured) == pages, (pages - set(measured), set(measured) - pages)
    assert all(isinstance(seconds, int | float) and seconds > 0 for seconds in measured.values())
