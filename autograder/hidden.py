"""The grader side of the hidden tests: cases, reference answers and verdicts.

An assignment's hidden tests live in ``solutions/<assignment>/hidden_tests.py``, which is
never released and never enters the sandbox. It builds a :class:`Suite`: for each graded
cell, a list of :class:`Call` s — a student function, its inputs, and how to obtain the
right answer (a reference function run here, or another call to agree with).

Grading then has two halves in two processes:

1. :func:`write_cases` puts the inputs (only the inputs) next to the notebook, and the
   kernel's :mod:`autograder.probe` reports what the student's code returned on them;
2. :func:`judge` compares those reports with the reference answers computed here, with
   numpy on plain arrays, in a process the student's code never ran in.

So the verdict cannot be bought by patching comparison functions, by objects whose ``==``
always holds, or by tensor subclasses: a report must carry the right numbers.
"""

from __future__ import annotations

import base64
import importlib.util
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import probe

SUITE_FILE = "hidden_tests.py"
_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
_TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}   # (rtol, atol)


@dataclass(frozen=True)
class Student:
    """An argument that is the student's own function ``name``."""

    name: str


@dataclass(frozen=True)
class Helper:
    """An argument that is one of :data:`autograder.probe.HELPERS` (the same on both sides)."""

    name: str


@dataclass(frozen=True)
class StandIn:
    """During the call, the student's function ``name`` is replaced by one that returns
    ``result`` and records its arguments, which must match ``expected_args``.

    This grades a function on its own even when it calls another graded function: a bug in
    that other function costs only that function's marks. ``jvp="softmax"`` connects the
    result to the first argument with the softmax's derivative, so gradients still flow.
    """

    expected_args: tuple
    result: torch.Tensor
    jvp: str | None = None


@dataclass
class Call:
    """One hidden case: ``function(*args, **kwargs)`` in the student's kernel.

    The answer is ``expect(*args, **kwargs)`` computed by the grader, or, with ``same_as``,
    the outputs of the call of that label; a call with neither is only observed, for
    another call to be compared with. ``gradients`` also compares the
    gradients of a random weighted sum of the outputs with respect to every floating-point
    tensor argument.
    """

    label: str
    function: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    expect: Callable[..., Any] | None = None
    same_as: str | None = None
    gradients: bool = True
    stand_ins: dict[str, StandIn] = field(default_factory=dict)

    def __post_init__(self):
        if self.expect is not None and self.same_as is not None:
            raise ValueError(f"{self.label}: give at most one of expect= and same_as=")


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


def _tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _grader_value(arg: Any) -> Any:
    if isinstance(arg, Helper):
        return probe.HELPERS[arg.name]
    if isinstance(arg, Student):
        raise TypeError("a call with a Student argument needs same_as=, not expect=")
    if isinstance(arg, torch.Tensor):
        return arg.detach().clone()
    return arg


def _kernel_value(arg: Any) -> Any:
    if isinstance(arg, Helper):
        return {"helper": arg.name}
    if isinstance(arg, Student):
        return {"student": arg.name}
    return arg


@dataclass
class Expected:
    """What the grader knows about one call: reference outputs and gradients."""

    call: Call
    outputs: tuple | None = None          # None when judged against another call
    mix: list[torch.Tensor] | None = None
    grads: list[torch.Tensor | None] = field(default_factory=list)


def _expected(call: Call, index: int) -> Expected:
    if call.expect is None:
        return Expected(call)
    args = [_grader_value(a) for a in call.args]
    kwargs = {k: _grader_value(a) for k, a in call.kwargs.items()}
    outputs = tuple(o.detach() for o in _tuple(call.expect(*args, **kwargs)))
    if not call.gradients:
        return Expected(call, outputs)
    generator = torch.Generator().manual_seed(1000 + index)
    mix = [torch.randn(o.shape, generator=generator, dtype=o.dtype) for o in outputs]
    args = [a.requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
            for a in args]
    loss = sum((o * m).sum() for o, m in zip(_tuple(call.expect(*args, **kwargs)), mix,
                                             strict=True))
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    grads = torch.autograd.grad(loss, leaves, allow_unused=True) if leaves else []
    return Expected(call, outputs, mix, [None if g is None else g.detach() for g in grads])


@lru_cache(maxsize=8)
def load(path: str) -> dict[str, list[Expected]]:
    """The suite in ``path`` with every reference answer computed (cached per process)."""
    spec = importlib.util.spec_from_file_location("_hidden_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    suite: Suite = module.SUITE
    expected = {}
    for grade_id, calls in suite.calls().items():
        labels = [c.label for c in calls]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{grade_id}: two hidden cases share a label")
        expected[grade_id] = [_expected(call, i) for i, call in enumerate(calls)]
    return expected


def write_cases(suite_path: Path, folder: Path) -> None:
    """Put the probe and the cases' inputs into ``folder``, where the notebook runs."""
    cases = {}
    for grade_id, expectations in load(str(suite_path)).items():
        cases[grade_id] = [{
            "label": e.call.label, "function": e.call.function,
            "args": [_kernel_value(a) for a in e.call.args],
            "kwargs": {k: _kernel_value(a) for k, a in e.call.kwargs.items()},
            "mix": e.mix,
            "stand_ins": {name: {"result": s.result, "jvp": s.jvp}
                          for name, s in e.call.stand_ins.items()},
        } for e in expectations]
    torch.save(cases, folder / probe.CASES_FILE)
    (folder / "_autograder_probe.py").write_text(Path(probe.__file__).read_text())


def remove_cases(folder: Path) -> None:
    for name in (probe.CASES_FILE, "_autograder_probe.py"):
        (folder / name).unlink(missing_ok=True)


# --------------------------------------------------------------------------- verdicts


class Mismatch(Exception):
    """A report disagrees with the expected answer (the message says how)."""


def _decode(report: Any, what: str) -> np.ndarray:
    """A reported tensor as a numpy array; :class:`Mismatch` if it is not a plain tensor."""
    if not isinstance(report, dict):
        raise Mismatch(f"{what}: the report is malformed")
    if report.get("kind") == "tensor subclass":
        raise Mismatch(f"{what}: expected a plain torch.Tensor, got the tensor subclass "
                       f"{report.get('type')}")
    if report.get("kind") != "tensor":
        kind = report.get("type") or report.get("kind")
        raise Mismatch(f"{what}: expected a tensor, got {kind}")
    try:
        stored = _DTYPES[report["stored"]]
        shape = tuple(int(s) for s in report["shape"])
        raw = base64.b64decode(report["data"], validate=True)
        array = np.frombuffer(raw, dtype=stored).reshape(shape)
    except (KeyError, ValueError, TypeError) as error:
        raise Mismatch(f"{what}: the report is malformed ({type(error).__name__})") from None
    return array


def _dtype_name(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def _compare(report: Any, expected: torch.Tensor, what: str, exact: bool = False) -> None:
    actual = _decode(report, what)
    dtype = _dtype_name(expected)
    if report["dtype"] != dtype:
        raise Mismatch(f"{what}: expected dtype {dtype}, got {report['dtype']}")
    if actual.shape != tuple(expected.shape):
        raise Mismatch(f"{what}: expected shape {tuple(expected.shape)}, got {actual.shape}")
    want = expected.numpy()
    if exact or expected.dtype == torch.bool or not expected.is_floating_point():
        if not np.array_equal(actual, want, equal_nan=expected.is_floating_point()):
            raise Mismatch(f"{what}: the values differ from the expected ones")
        return
    if np.isnan(actual).any() and not np.isnan(want).any():
        raise Mismatch(f"{what}: contains NaN")
    rtol, atol = _TOLERANCE.get(dtype, _TOLERANCE["float32"])
    if not np.allclose(actual, want, rtol=rtol, atol=atol):
        difference = np.abs(actual.astype(np.float64) - want.astype(np.float64))
        where = np.unravel_index(np.nanargmax(np.where(np.isnan(difference), np.inf,
                                                       difference)), difference.shape)
        raise Mismatch(f"{what}: values differ from the expected ones (largest difference "
                       f"{float(difference[where]):.3g} at index {tuple(int(i) for i in where)})")


def _outputs(report: Any, count: int, what: str) -> list:
    if not isinstance(report, dict):
        raise Mismatch(f"{what}: the report is malformed")
    items = report.get("items") if report.get("kind") == "tuple" else [report]
    if count > 1 and report.get("kind") != "tuple":
        raise Mismatch(f"{what}: expected a tuple of {count} results, got "
                       f"{report.get('type') or report.get('kind')}")
    if count == 1 and report.get("kind") == "tuple":
        raise Mismatch(f"{what}: expected one result, got a tuple")
    if not isinstance(items, list) or len(items) != count:
        raise Mismatch(f"{what}: expected {count} results, got "
                       f"{len(items) if isinstance(items, list) else 'none'}")
    return items


def _check_call(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    call, what = e.call, e.call.label
    if call.expect is None and call.same_as is None:
        return                     # observed only, for another call to be compared with
    if "error" in observation:
        raise Mismatch(f"{what}: your code raised {str(observation['error'])[:300]}")
    if "outputs" not in observation:
        raise Mismatch(f"{what}: the report is malformed")
    if call.same_as is not None:
        other = seen.get(call.same_as, {})
        if "outputs" not in other or "error" in other:
            raise Mismatch(f"{what}: could not be compared with {call.same_as}")
        reference = other["outputs"]
        items = reference.get("items") if reference.get("kind") == "tuple" else [reference]
        mine = _outputs(observation["outputs"], len(items), what)
        for a, b in zip(mine, items, strict=True):
            _compare(a, torch.from_numpy(_decode(b, call.same_as).copy()), what)
        return
    for i, (report, want) in enumerate(zip(_outputs(observation["outputs"], len(e.outputs),
                                                    what), e.outputs, strict=True)):
        _compare(report, want, what if len(e.outputs) == 1 else f"{what}, result {i + 1}")
    tensors = [a for a in call.args if isinstance(a, torch.Tensor)]
    after = [a for a in observation.get("inputs_after", []) if a is not None]
    if len(after) != len(tensors):
        raise Mismatch(f"{what}: the report is malformed")
    for position, (report, original) in enumerate(zip(after, tensors, strict=True)):
        try:
            _compare(report, original, what, exact=True)
        except Mismatch:
            raise Mismatch(f"{what}: tensor argument {position + 1} was modified in "
                           "place") from None
    _check_stand_ins(call, observation.get("stand_in_calls", {}), what)
    if e.mix is not None:
        _check_gradients(e, observation.get("gradients"), what)


def _check_stand_ins(call: Call, recorded: Any, what: str) -> None:
    for name, stand_in in call.stand_ins.items():
        calls = recorded.get(name, []) if isinstance(recorded, dict) else None
        if not isinstance(calls, list):
            raise Mismatch(f"{what}: the report is malformed")
        for arguments in calls:
            if not isinstance(arguments, list) or len(arguments) < 1:
                raise Mismatch(f"{what}: {name} was called without arguments")
            expected = list(stand_in.expected_args)
            given = arguments + [{"kind": "None"}] * (len(expected) - len(arguments))
            for position, (report, want) in enumerate(zip(given, expected, strict=False)):
                where = f"{what}: argument {position + 1} given to {name}"
                if want is None:
                    if report.get("kind") != "None":
                        raise Mismatch(f"{where} should be None")
                else:
                    _compare(report, want, where)


def _check_gradients(e: Expected, report: Any, what: str) -> None:
    if not isinstance(report, dict):
        raise Mismatch(f"{what}: the gradients were not reported")
    if "error" in report:
        raise Mismatch(f"{what}: computing gradients through your code raised "
                       f"{str(report['error'])[:300]}")
    grads = report.get("grads")
    if not isinstance(grads, list) or len(grads) != len(e.grads):
        raise Mismatch(f"{what}: the gradients were not reported")
    for position, (actual, want) in enumerate(zip(grads, e.grads, strict=True)):
        if want is None or (actual is None and not bool(want.any())):
            continue      # no gradient expected, or expected exactly zero and none flows
        where = f"{what}, gradient of tensor argument {position + 1}"
        if actual is None:
            raise Mismatch(f"{what}: no gradient flows back to tensor argument "
                           f"{position + 1}")
        _compare(actual, want, where)


def failures(expectations: list[Expected], payload: Any) -> Iterator[str]:
    """Every way the reported ``payload`` disagrees with ``expectations``."""
    observations = payload.get("observations") if isinstance(payload, dict) else None
    if not isinstance(observations, list):
        yield "the hidden tests' report is malformed"
        return
    by_label = {}
    for observation in observations:
        if isinstance(observation, dict) and isinstance(observation.get("label"), str):
            by_label.setdefault(observation["label"], observation)
    for e in expectations:
        observation = by_label.get(e.call.label)
        if observation is None:
            yield f"{e.call.label}: not reported (the hidden tests did not finish)"
            continue
        try:
            _check_call(e, observation, by_label)
        except Mismatch as mismatch:
            yield str(mismatch)


def judge(expectations: list[Expected], payload: Any) -> str | None:
    """``None`` if every case passed, else a message naming the first failure."""
    problems = list(failures(expectations, payload))
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more of {len(expectations)} hidden checks)" \
        if len(problems) > 1 else ""
    return problems[0] + more
