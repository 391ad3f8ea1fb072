"""Progress of long work: a bar while you watch, one clean line in the built book.

In Jupyter or a terminal, :func:`progress` is a ``tqdm`` bar (a widget in Jupyter, text in
a terminal) that shows how far a training run has got. When the book is built, a bar's
updates would be printed into the page, a dozen half-drawn lines of it; there it prints
nothing while it runs and one summary line when it ends::

    training: 1200 steps in 41 s (loss=0.031)

The book's build says it is the build by setting :data:`BUILD_VARIABLE` (see
``book_build/extensions/build_env.py``), which the notebooks' kernels inherit.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Iterable, Iterator
from typing import Any

BUILD_VARIABLE = "ATTENTION_COURSE_BOOK_BUILD"


def in_book_build() -> bool:
    """Whether this code runs while the book is being built."""
    return bool(os.environ.get(BUILD_VARIABLE))


class Summary:
    """A stand-in for a ``tqdm`` bar that prints one line when it is closed: the label,
    the count, the seconds it took and the last postfix."""

    def __init__(self, iterable: Iterable | None = None, total: int | None = None,
                 desc: str = "", unit: str = "it") -> None:
        self.iterable, self.total, self.desc, self.unit = iterable, total, desc, unit
        self.n, self.postfix, self._start, self._closed = 0, "", time.perf_counter(), False

    def __iter__(self) -> Iterator:
        try:
            for item in self.iterable:
                yield item
                self.n += 1
        finally:
            self.close()

    def __enter__(self) -> Summary:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def update(self, n: int = 1) -> None:
        self.n += n

    def set_postfix(self, refresh: bool = True, **values: Any) -> None:
        self.postfix = ", ".join(f"{key}={value}" for key, value in values.items())

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        seconds = time.perf_counter() - self._start
        label = f"{self.desc}: " if self.desc else ""
        extra = f" ({self.postfix})" if self.postfix else ""
        print(f"{label}{self.n} {self.unit} in {seconds:.0f} s{extra}", file=sys.stdout,
              flush=True)


def progress(iterable: Iterable | None = None, total: int | None = None, desc: str = "",
             unit: str = "it", **tqdm_options: Any):
    """A progress bar over ``iterable`` (or one you ``update`` yourself, of ``total``
    steps): ``tqdm``'s own while you watch, a one-line :class:`Summary` in the built book."""
    if in_book_build():
        return Summary(iterable, total, desc, unit)
    from tqdm.auto import tqdm

    return tqdm(iterable, total=total, desc=desc, unit=unit, **tqdm_options)
