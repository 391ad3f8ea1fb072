"""The vocabulary hidden tests are written in: which student function to call, on what, and
how to obtain the right answer.

An assignment's hidden tests live in ``solutions/<assignment>/hidden_tests.py``, never
released and never in the sandbox. It builds a :class:`Suite`: for each graded cell, a list
of :class:`Call` s — a student function (or a method of a :class:`Module`), its inputs, and
how to know the right answer (a reference function run in the grader, another call to agree
with, or a check), possibly with :class:`StandIn` s for the parts the student's code calls.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import torch


@dataclass(frozen=True)
class Student:
    """An argument that is the student's own function or class ``name``; the grader uses
    ``reference`` in its place (without one, the call needs ``same_as=`` or ``check=``)."""

    name: str
    reference: Callable[..., Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Helper:
    """An argument that is one of :data:`autograder.hidden.probe.HELPERS` (the same on both
    sides)."""

    name: str


class _Any:
    """An argument of a stand-in that is not checked."""

    def __repr__(self) -> str:
        return "ANY"


ANY = _Any()


@dataclass(frozen=True, eq=False)
class Module:
    """An instance of the student's class ``name``: built as ``name(*init)``, then loaded
    with ``state`` (``load_state_dict(strict=True)``, so attribute names and shapes must be
    the contract's) and put in eval mode. The grader builds ``reference(*init)`` with the
    same state to compute the answer. With ``dtype`` (e.g. ``torch.float64``), both are
    converted to it (``.to(dtype)``) before the state is loaded.
    """

    name: str
    init: tuple = ()
    state: dict[str, torch.Tensor] | None = None
    reference: type | None = None
    dtype: torch.dtype | None = None

    def build_reference(self) -> torch.nn.Module:
        if self.reference is None:
            raise TypeError(f"Module({self.name!r}) has no reference class")
        module = self.reference(*self.init)
        if self.dtype is not None:
            module.to(self.dtype)
        if self.state is not None:
            module.load_state_dict({k: v.detach().clone() for k, v in self.state.items()},
                                   strict=True)
        return module.eval()


@dataclass(frozen=True, eq=False)
class StandIn:
    """During the call, the student's function (or, with a name ``self.a.b``, the attribute
    ``a.b`` of the instance under test) is replaced by one that records its arguments and
    returns ``result`` at every call, the arguments matching ``expected_args`` each time;
    or, with ``script``, returns the i-th entry's result at the i-th call, whose arguments
    must match that entry's, and must be called exactly ``len(script)`` times.

    This grades a function on its own even when it calls another graded function: a bug in
    that other function costs only that function's marks. ``jvp="softmax"`` connects the
    result to the first argument with the softmax's derivative, so gradients still flow.
    In expected arguments, ``None`` must be given as None and :data:`ANY` is not checked.
    With ``helper``, the stand-in returns what that helper returns on its arguments
    (a function of the assignment's probe helpers); ``times`` is how often it must be
    called (None: any number of times).

    With ``table``, a tuple of ``(arguments, result)`` entries, each call returns (a copy
    of) the result of the first entry whose arguments match the ones given, however often
    it is called; a call that matches no entry raises in the student's code. This allows
    several correct ways of calling the function (e.g. attention on all heads at once, on
    heads folded into the batch, or head by head). Tensors match when they have the same
    dtype and shape and are close (as results are compared), boolean tensors (masks) when
    they broadcast to the entry's shape and are then equal; :data:`ANY` matches anything.
    The kernel matches the calls, so the grader does not check them again.
    """

    expected_args: tuple | None = None
    result: Any = None
    jvp: str | None = None
    script: tuple[tuple[tuple, Any], ...] = ()
    helper: str | None = None
    times: int | None = None
    table: tuple[tuple[tuple, Any], ...] = ()

    def kernel_spec(self) -> dict:
        if self.helper is not None:
            return {"helper": self.helper}
        if self.table:
            return {"table": [[[{"any": True} if a is ANY else a for a in args], result]
                              for args, result in self.table]}
        if self.script:
            return {"results": [result for _, result in self.script], "jvp": self.jvp}
        return {"results": [self.result], "repeat": True, "jvp": self.jvp}


@dataclass(frozen=True, eq=False)
class Partial:
    """An expected tensor of which only the entries where ``known`` is True are specified
    (the contract leaves the others open)."""

    value: torch.Tensor
    known: torch.Tensor

    def detach(self) -> Partial:
        return Partial(self.value.detach(), self.known)


def expected_tensor(output: torch.Tensor | Partial) -> torch.Tensor:
    """The tensor of an expected output: a :class:`Partial`'s values (its open entries
    included), or the tensor itself."""
    return output.value if isinstance(output, Partial) else output


@dataclass
class Call:
    """One hidden case: ``function(*args, **kwargs)`` in the student's kernel.

    ``function`` names a function of the notebook, or, with ``instance``, a method of an
    instance of one of its classes, or is a :class:`Helper` (shared by both sides). The
    answer is ``expect(*args, **kwargs)`` computed by the grader (``expect(reference
    instance, *args, **kwargs)`` with an ``instance``), or, with ``same_as``, the outputs
    of the call of that label; ``check`` instead judges the outputs (numpy arrays) and
    returns what is wrong, or None; with ``expect_error`` (an exception's class name, such
    as ``"ValueError"``), the call must raise that exception. A call with none of these is
    only observed, for another call to be compared with. ``gradients`` also compares the
    gradients of a random
    weighted sum of the outputs with respect to every floating-point tensor argument and
    every parameter of the instance. ``seed`` seeds torch before the call on both sides.

    ``stand_ins`` isolate parts of the student's code (see :class:`StandIn`), but only
    parts it calls: code that computes a part itself instead of calling it is run again
    without stand-ins, and judged against ``inline`` — the reference computed end to end
    with the same weights (called like ``expect``). Every call with stand-ins needs it.
    """

    label: str
    function: str | Helper
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expect: Callable[..., Any] | None = None
    same_as: str | None = None
    check: Callable[[list[np.ndarray]], str | None] | None = None
    gradients: bool = True
    stand_ins: dict[str, StandIn] = field(default_factory=dict)
    instance: Module | None = None
    seed: int = 0
    expect_error: str | None = None
    inline: Callable[..., Any] | None = None

    def __post_init__(self):
        if sum(x is not None for x in (self.expect, self.same_as, self.check,
                                       self.expect_error)) > 1:
            raise ValueError(f"{self.label}: give at most one of expect=, same_as=, check=, "
                             "expect_error=")
        if self.stand_ins and self.expect is not None and self.inline is None:
            raise ValueError(f"{self.label}: a call with stand-ins needs inline=, the "
                             "reference for code that computes those parts itself")


class Suite:
    """The hidden tests of one assignment: ``{grade_id: [Call, ...]}``."""

    def __init__(self):
        self._builders: dict[str, Callable[[torch.Generator], Iterable[Call]]] = {}

    def test(self, grade_id: str, seed: int):
        """Register a function ``(generator) -> calls`` as the hidden tests of ``grade_id``."""
        def register(builder):
            def seeded():
                return list(builder(torch.Generator().manual_seed(seed)))
            self._builders[grade_id] = seeded
            return builder
        return register

    def calls(self) -> dict[str, list[Call]]:
        return {grade_id: build() for grade_id, build in self._builders.items()}
