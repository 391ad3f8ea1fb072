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
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import numpy as np
import torch

from . import probe
from .suite_files import HELPERS_FILE

_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
_TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}   # (rtol, atol)


@dataclass(frozen=True)
class Student:
    """An argument that is the student's own function or class ``name``; the grader uses
    ``reference`` in its place (without one, the call needs ``same_as=`` or ``check=``)."""

    name: str
    reference: Callable[..., Any] | None = field(default=None, compare=False)


@dataclass(frozen=True)
class Helper:
    """An argument that is one of :data:`autograder.probe.HELPERS` (the same on both sides)."""

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


def _tuple(value: Any) -> tuple:
    return value if isinstance(value, tuple) else (value,)


def _grader_value(arg: Any, helpers: dict) -> Any:
    if isinstance(arg, Helper):
        return helpers[arg.name]
    if isinstance(arg, Student):
        if arg.reference is None:
            raise TypeError(f"Student({arg.name!r}) has no reference: the call needs "
                            "same_as= or check=, not expect=")
        return arg.reference
    if isinstance(arg, Module):
        return arg.build_reference()
    if isinstance(arg, torch.Tensor):
        return arg.detach().clone()
    if isinstance(arg, list):
        return [_grader_value(item, helpers) for item in arg]
    return arg


def _kernel_value(arg: Any) -> Any:
    if isinstance(arg, Helper):
        return {"helper": arg.name}
    if isinstance(arg, Student):
        return {"student": arg.name}
    if isinstance(arg, Module):
        spec = {"module": arg.name, "init": list(arg.init), "state": arg.state}
        if arg.dtype is not None:
            spec["dtype"] = str(arg.dtype).removeprefix("torch.")
        return spec
    if isinstance(arg, list):
        return [_kernel_value(item) for item in arg]
    return arg


@dataclass
class Expected:
    """What the grader knows about one call: reference outputs and gradients."""

    call: Call
    outputs: tuple | None = None          # None when judged against another call
    mix: list[torch.Tensor] | None = None
    grads: list[torch.Tensor | None] = field(default_factory=list)
    parameters: list[str] = field(default_factory=list)
    parameter_grads: list[torch.Tensor | None] = field(default_factory=list)
    inline: Expected | None = None        # for code that computes the stand-ins' parts


def _value(output: Any) -> torch.Tensor:
    return output.value if isinstance(output, Partial) else output


def _run_reference(call: Call, helpers: dict, grad: bool, inline: bool = False):
    """(outputs, tensor args, reference instance) of the reference (``call.inline`` with
    ``inline``) on fresh inputs."""
    args = [_grader_value(a, helpers) for a in call.args]
    kwargs = {k: _grader_value(a, helpers) for k, a in call.kwargs.items()}
    if grad:
        args = [a.requires_grad_(a.is_floating_point()) if isinstance(a, torch.Tensor) else a
                for a in args]
    instance = call.instance.build_reference() if call.instance is not None else None
    reference = call.inline if inline else call.expect
    probe.seed(call.seed)
    outputs = _tuple(reference(*args, **kwargs) if instance is None
                     else reference(instance, *args, **kwargs))
    return outputs, args, instance


def _expected(call: Call, index: int, helpers: dict) -> Expected:
    if call.expect is None:
        return Expected(call)
    expected = _reference_answer(call, helpers, lambda outputs: _mix(outputs, index))
    if call.inline is not None:
        expected.inline = _reference_answer(call, helpers, lambda _: expected.mix,
                                            inline=True)
    return expected


def _mix(outputs: tuple, index: int) -> list[torch.Tensor]:
    """Random weights of each output's entries (zero where an output is unspecified):
    gradients are compared for sum(output * mix)."""
    generator = torch.Generator().manual_seed(1000 + index)
    mix = []
    for output in outputs:
        value = _value(output)
        if not value.is_floating_point():      # token ids, masks: nothing to differentiate
            mix.append(torch.zeros(value.shape))
            continue
        weights = torch.randn(value.shape, generator=generator, dtype=value.dtype)
        mix.append(weights * output.known if isinstance(output, Partial) else weights)
    return mix


def _reference_answer(call: Call, helpers: dict, mix_of: Callable[[tuple], list],
                      inline: bool = False) -> Expected:
    """The reference's outputs (``call.inline``'s with ``inline``) and, if the call
    compares gradients, the gradients of sum(output * mix), ``mix_of(outputs)``: the
    kernel gets one mix, so ``inline`` uses the same as ``expect``."""
    outputs, _, instance = _run_reference(call, helpers, grad=False, inline=inline)
    outputs = tuple(o.detach() for o in outputs)
    if not call.gradients:
        return Expected(call, outputs)
    if inline and any(isinstance(o, Partial) for o in outputs):
        raise ValueError(f"{call.label}: gradients are not compared for partially "
                         "specified inline outputs")
    mix = mix_of(outputs)
    names = [name for name, _ in instance.named_parameters()] if instance is not None else []
    results, args, instance = _run_reference(call, helpers, grad=True, inline=inline)
    loss = sum((_value(o) * m).sum() for o, m in zip(results, mix, strict=True))
    leaves = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
    parameters = list(instance.parameters()) if instance is not None else []
    grads = torch.autograd.grad(loss, leaves + parameters, allow_unused=True) \
        if leaves or parameters else []
    grads = [None if g is None else g.detach() for g in grads]
    return Expected(call, outputs, mix, grads[:len(leaves)], names, grads[len(leaves):])


def suite_helpers(suite_path: Path) -> dict:
    """The helpers a suite's calls may use: the probe's and its ``probe_helpers.py``."""
    module = _helpers_module(suite_path)
    return {**probe.HELPERS, **(module.HELPERS if module is not None else {})}


def _helpers_module(suite_path: Path):
    path = Path(suite_path).parent / HELPERS_FILE
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location("probe_helpers", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["probe_helpers"] = module        # the suite imports it by that name
    spec.loader.exec_module(module)
    return module


def load(path: str | Path) -> dict[str, list[Expected]]:
    """The suite in ``path`` with every reference answer computed, once per process for
    each file however its path is spelled (the grading fork server computes them for its
    children: :mod:`autograder.warmup`)."""
    return _load(str(Path(path).resolve()))


@lru_cache(maxsize=8)
def _load(path: str) -> dict[str, list[Expected]]:
    helpers = suite_helpers(Path(path))
    spec = importlib.util.spec_from_file_location("_hidden_tests", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    suite: Suite = module.SUITE
    expected = {}
    for grade_id, calls in suite.calls().items():
        labels = [c.label for c in calls]
        if len(set(labels)) != len(labels):
            raise ValueError(f"{grade_id}: two hidden cases share a label")
        expected[grade_id] = [_expected(call, i, helpers) for i, call in enumerate(calls)]
    return expected


def _kernel_case(e: Expected) -> dict:
    call = e.call
    function = {"helper": call.function.name} if isinstance(call.function, Helper) \
        else call.function
    return {"label": call.label, "function": function,
            "args": [_kernel_value(a) for a in call.args],
            "kwargs": {k: _kernel_value(a) for k, a in call.kwargs.items()},
            "instance": _kernel_value(call.instance) if call.instance is not None else None,
            "mix": e.mix, "parameters": e.parameters, "seed": call.seed,
            "stand_ins": {path: s.kernel_spec() for path, s in call.stand_ins.items()},
            "inline": e.inline is not None}


def write_cases(suite_path: Path, folder: Path) -> None:
    """Put the probe, the assignment's helpers and the cases' inputs into ``folder``."""
    cases = {grade_id: [_kernel_case(e) for e in expectations]
             for grade_id, expectations in load(str(suite_path)).items()}
    torch.save(cases, folder / probe.CASES_FILE)
    (folder / "_autograder_probe.py").write_text(Path(probe.__file__).read_text())
    helpers = Path(suite_path).parent / HELPERS_FILE
    if helpers.exists():
        (folder / f"{probe.HELPERS_MODULE}.py").write_text(helpers.read_text())


def remove_cases(folder: Path) -> None:
    for name in (probe.CASES_FILE, "_autograder_probe.py", f"{probe.HELPERS_MODULE}.py"):
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


def _compare(report: Any, expected: torch.Tensor | Partial, what: str,
             exact: bool = False) -> None:
    """Raise :class:`Mismatch` unless ``report`` is a plain tensor equal to ``expected``
    (close to it, for floating point; on its known entries only, for a :class:`Partial`)."""
    known = expected.known.numpy() if isinstance(expected, Partial) else None
    expected = _value(expected)
    actual = _decode(report, what)
    dtype = _dtype_name(expected)
    if report["dtype"] != dtype:
        raise Mismatch(f"{what}: expected dtype {dtype}, got {report['dtype']}")
    if actual.shape != tuple(expected.shape):
        raise Mismatch(f"{what}: expected shape {tuple(expected.shape)}, got {actual.shape}")
    want = expected.numpy()
    if known is not None:
        actual, want = np.where(known, actual, 0).astype(actual.dtype), \
            np.where(known, want, 0).astype(want.dtype)
    if exact or expected.dtype == torch.bool or not expected.is_floating_point():
        if not np.array_equal(actual, want, equal_nan=expected.is_floating_point()):
            differ = np.argwhere(actual != want)
            where = f" (first at index {tuple(int(i) for i in differ[0])})" if len(differ) \
                else ""
            raise Mismatch(f"{what}: the values differ from the expected ones{where}")
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
    if observation.get("inline"):
        if e.inline is None:
            raise Mismatch(f"{what}: the report is malformed")
        e = e.inline      # the student's code computed the stand-ins' parts itself
    if call.expect_error is not None:
        _check_error(call.expect_error, observation, what)
        return
    if call.expect is None and call.same_as is None and call.check is None:
        return                     # observed only, for another call to be compared with
    if "error" in observation:
        raise Mismatch(f"{what}: your code raised {str(observation['error'])[:300]}")
    if "outputs" not in observation:
        raise Mismatch(f"{what}: the report is malformed")
    forbidden = observation.get("forbidden")
    if forbidden:
        names = ", ".join(str(name) for name in forbidden) if isinstance(forbidden, list) \
            else "a forbidden function"
        raise Mismatch(f"{what}: your code called {names}, which graded code must not call")
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
    if call.check is not None:
        report = observation["outputs"]
        items = report.get("items") if isinstance(report, dict) and \
            report.get("kind") == "tuple" else [report]
        arrays = [_decode(item, what) for item in (items or [])]
        problem = call.check(arrays)
        if problem:
            raise Mismatch(f"{what}: {problem}")
    else:
        outputs = _outputs(observation["outputs"], len(e.outputs), what)
        for i, (report, want) in enumerate(zip(outputs, e.outputs, strict=True)):
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
    if not observation.get("inline"):
        _check_stand_ins(call, observation.get("stand_in_calls", {}), what)
    if e.mix is not None:
        _check_gradients(e, observation.get("gradients"), what)


def _check_error(name: str, observation: dict, what: str) -> None:
    """The call must have raised the exception class ``name``."""
    error = observation.get("error")
    if error is None:
        raise Mismatch(f"{what}: expected {name} to be raised, but nothing was raised")
    if str(error).split(":")[0].strip() != name:
        raise Mismatch(f"{what}: expected {name} to be raised, but your code raised "
                       f"{str(error)[:300]}")


def _check_arguments(arguments: Any, expected: tuple, where: str) -> None:
    if not isinstance(arguments, list) or len(arguments) < 1:
        raise Mismatch(f"{where} was called without arguments")
    if len(arguments) > len(expected):
        raise Mismatch(f"{where} was given {len(arguments)} arguments, expected "
                       f"{len(expected)}")
    given = arguments + [{"kind": "None"}] * (len(expected) - len(arguments))
    for position, (report, want) in enumerate(zip(given, expected, strict=True)):
        what = f"argument {position + 1} given to {where}"
        if want is ANY:
            continue
        if want is None:
            if not isinstance(report, dict) or report.get("kind") != "None":
                raise Mismatch(f"{what} should be None")
        elif isinstance(want, torch.Tensor | Partial):
            _compare(report, want, what)
        elif not isinstance(report, dict) or report.get("value") != want:
            raise Mismatch(f"{what} should be {want!r}")


def _check_stand_ins(call: Call, recorded: Any, what: str) -> None:
    for name, stand_in in call.stand_ins.items():
        calls = recorded.get(name, []) if isinstance(recorded, dict) else None
        if not isinstance(calls, list):
            raise Mismatch(f"{what}: the report is malformed")
        shown = name.removeprefix("self.")
        if stand_in.script:
            if len(calls) != len(stand_in.script):
                raise Mismatch(f"{what}: {shown} was called {len(calls)} times, expected "
                               f"{len(stand_in.script)}")
            for step, (arguments, (expected, _)) in enumerate(zip(calls, stand_in.script,
                                                                 strict=True)):
                _check_arguments(arguments, expected, f"{what}: {shown} (call {step + 1})")
        elif stand_in.table:
            continue                # matched in the kernel: a call matching no entry raised
        else:
            if stand_in.times is not None and len(calls) != stand_in.times:
                raise Mismatch(f"{what}: {shown} was called {len(calls)} times, expected "
                               f"{stand_in.times}")
            for arguments in calls:
                _check_arguments(arguments, stand_in.expected_args, f"{what}: {shown}")


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
        _check_gradient(actual, want, f"tensor argument {position + 1}", what)
    if not e.parameters:
        return
    by_parameter = report.get("parameter_grads")
    if not isinstance(by_parameter, list) or len(by_parameter) != len(e.parameters):
        raise Mismatch(f"{what}: the gradients were not reported")
    for name, actual, want in zip(e.parameters, by_parameter, e.parameter_grads, strict=True):
        if isinstance(actual, dict) and actual.get("kind") == "missing":
            raise Mismatch(f"{what}: your module has no parameter {name}")
        _check_gradient(actual, want, f"parameter {name}", what)


def _check_gradient(actual: Any, want: torch.Tensor | None, of: str, what: str) -> None:
    if want is None or (actual is None and not bool(want.any())):
        return      # no gradient expected, or expected exactly zero and none flows
    if actual is None:
        raise Mismatch(f"{what}: no gradient flows back to {of}")
    _compare(actual, want, f"{what}, gradient of {of}")


def failures(expectations: list[Expected], payload: Any) -> Iterator[tuple[str, str]]:
    """(case label, what is wrong) for every way ``payload`` disagrees with
    ``expectations``."""
    observations = payload.get("observations") if isinstance(payload, dict) else None
    if not isinstance(observations, list):
        yield "*", "the hidden tests' report is malformed"
        return
    by_label = {}
    for observation in observations:
        if isinstance(observation, dict) and isinstance(observation.get("label"), str):
            by_label.setdefault(observation["label"], observation)
    for e in expectations:
        observation = by_label.get(e.call.label)
        if observation is None:
            yield e.call.label, f"{e.call.label}: not reported (the hidden tests did not finish)"
            continue
        try:
            _check_call(e, observation, by_label)
        except Mismatch as mismatch:
            yield e.call.label, str(mismatch)


def summary(problems: list[tuple[str, str]], total: int) -> str | None:
    """``None`` if nothing failed, else the first failure and how many more there are."""
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more of {total} hidden checks)" \
        if len(problems) > 1 else ""
    return problems[0][1] + more


def judge(expectations: list[Expected], payload: Any) -> str | None:
    """``None`` if every case passed, else a message naming the first failure."""
    return summary(list(failures(expectations, payload)), len(expectations))
