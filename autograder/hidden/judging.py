"""Verdicts: the kernel's reports judged against the references, in the grader's process.

What the probe reported is compared with numpy on plain arrays, in a process the student's
code never ran in, so a verdict cannot be bought by patching comparison functions, by
objects whose ``==`` always holds, or by tensor subclasses: a report must carry the right
numbers. Every failing case is a :class:`Failure` — its label, what is wrong (for people),
and its kind (for machines: the diagnosis compares kinds, never messages).
"""

from __future__ import annotations

import base64
from collections.abc import Callable, Iterator
from typing import Any, NamedTuple

import numpy as np
import torch

from ..course.outcome import clip
from .probe import MESSAGE_LIMIT
from .references import Expected
from .vocabulary import ANY, Call, Partial, expected_tensor

_DTYPES = {"float32": np.float32, "float64": np.float64, "int64": np.int64, "bool": np.bool_}
_TOLERANCE = {"float32": (1e-4, 1e-5), "float64": (1e-7, 1e-9)}   # (rtol, atol)



class Failure(NamedTuple):
    """One way a case failed: its label, what is wrong (said to people), and the kind of
    failure (one of :data:`KINDS`, compared by machines)."""

    label: str
    message: str
    kind: str


KINDS = ("values", "nan", "dtype", "shape", "type", "in place", "gradient", "calls",
         "arguments", "forbidden", "raises", "missing parameter", "not reported",
         "malformed", "visible")
VISIBLE_TESTS = "visible tests"     # the label of a cell's own (visible) tests' failure


def visible_failure(error_name: str, error_value: str) -> Failure:
    """The failure of a test cell's visible tests, which raised ``error_name``: its kind is
    the message itself (the visible tests' inputs are fixed, so the same mistake gives the
    same message)."""
    message = f"{error_name}: {error_value}" if error_value else error_name
    return Failure(VISIBLE_TESTS, clip(message), f"visible: {message[:160]}")


class Mismatch(Exception):
    """A report disagrees with the expected answer: how (``kind``, one of :data:`KINDS`)
    and, said to people, the message."""

    def __init__(self, kind: str, message: str):
        assert kind in KINDS, kind
        super().__init__(message)
        self.kind = kind


def _decode(report: Any, what: str) -> np.ndarray:
    """A reported tensor as a numpy array; :class:`Mismatch` if it is not a plain tensor."""
    if not isinstance(report, dict):
        raise Mismatch("malformed", f"{what}: the report is malformed")
    if report.get("kind") == "tensor subclass":
        raise Mismatch("type", f"{what}: expected a plain torch.Tensor, got the tensor subclass "
                       f"{report.get('type')}")
    if report.get("kind") != "tensor":
        kind = report.get("type") or report.get("kind")
        raise Mismatch("type", f"{what}: expected a tensor, got {kind}")
    try:
        stored = _DTYPES[report["stored"]]
        shape = tuple(int(s) for s in report["shape"])
        raw = base64.b64decode(report["data"], validate=True)
        array = np.frombuffer(raw, dtype=stored).reshape(shape)
    except (KeyError, ValueError, TypeError) as error:
        raise Mismatch("malformed",
                       f"{what}: the report is malformed ({type(error).__name__})") from None
    return array


def _dtype_name(tensor: torch.Tensor) -> str:
    return str(tensor.dtype).removeprefix("torch.")


def _compare(report: Any, expected: torch.Tensor | Partial, what: str,
             exact: bool = False) -> None:
    """Raise :class:`Mismatch` unless ``report`` is a plain tensor equal to ``expected``
    (close to it, for floating point; on its known entries only, for a :class:`Partial`)."""
    known = expected.known.numpy() if isinstance(expected, Partial) else None
    expected = expected_tensor(expected)
    actual = _decode(report, what)
    dtype = _dtype_name(expected)
    if report["dtype"] != dtype:
        raise Mismatch("dtype", f"{what}: expected dtype {dtype}, got {report['dtype']}")
    if actual.shape != tuple(expected.shape):
        raise Mismatch("shape",
                       f"{what}: expected shape {tuple(expected.shape)}, got {actual.shape}")
    want = expected.numpy()
    if known is not None:
        actual, want = np.where(known, actual, 0).astype(actual.dtype), \
            np.where(known, want, 0).astype(want.dtype)
    if exact or expected.dtype == torch.bool or not expected.is_floating_point():
        if not np.array_equal(actual, want, equal_nan=expected.is_floating_point()):
            differ = np.argwhere(actual != want)
            where = f" (first at index {tuple(int(i) for i in differ[0])})" if len(differ) \
                else ""
            raise Mismatch("values", f"{what}: the values differ from the expected ones{where}")
        return
    if np.isnan(actual).any() and not np.isnan(want).any():
        raise Mismatch("nan", f"{what}: contains NaN")
    rtol, atol = _TOLERANCE.get(dtype, _TOLERANCE["float32"])
    if not np.allclose(actual, want, rtol=rtol, atol=atol):
        difference = np.abs(actual.astype(np.float64) - want.astype(np.float64))
        where = np.unravel_index(np.nanargmax(np.where(np.isnan(difference), np.inf,
                                                       difference)), difference.shape)
        raise Mismatch("values",
                       f"{what}: values differ from the expected ones (largest difference "
                       f"{float(difference[where]):.3g} at index {tuple(int(i) for i in where)})")


def _outputs(report: Any, count: int, what: str) -> list:
    if not isinstance(report, dict):
        raise Mismatch("malformed", f"{what}: the report is malformed")
    items = report.get("items") if report.get("kind") == "tuple" else [report]
    if count > 1 and report.get("kind") != "tuple":
        raise Mismatch("shape", f"{what}: expected a tuple of {count} results, got "
                       f"{report.get('type') or report.get('kind')}")
    if count == 1 and report.get("kind") == "tuple":
        raise Mismatch("shape", f"{what}: expected one result, got a tuple")
    if not isinstance(items, list) or len(items) != count:
        raise Mismatch("shape", f"{what}: expected {count} results, got "
                       f"{len(items) if isinstance(items, list) else 'none'}")
    return items


def _check_call(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    """Raise :class:`Mismatch` unless ``observation`` (the kernel's report of one call)
    answers ``e``, in the call's mode (:data:`MODES`); ``seen`` holds the reports of the
    other calls, by label."""
    if observation.get("inline"):
        if e.inline is None:
            raise Mismatch("malformed", f"{e.call.label}: the report is malformed")
        e = e.inline      # the student's code computed the stand-ins' parts itself
    mode = next(mode for mode in MODES if mode.applies(e.call))
    mode.check(e, observation, seen)


def _raises(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    _check_error(e.call.expect_error, observation, e.call.label)


def _observed_only(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    """Nothing to judge: the call is there for another call to be compared with."""


def _same_as(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    """The outputs equal those of the call ``call.same_as`` (in the same kernel)."""
    call, what = e.call, e.call.label
    report = _answered(call, observation)
    other = seen.get(call.same_as, {})
    if "outputs" not in other or "error" in other:
        raise Mismatch("not reported", f"{what}: could not be compared with {call.same_as}")
    reference = other["outputs"]
    items = reference.get("items") if reference.get("kind") == "tuple" else [reference]
    mine = _outputs(report, len(items), what)
    for a, b in zip(mine, items, strict=True):
        _compare(a, torch.from_numpy(_decode(b, call.same_as).copy()), what)


def _passes_its_check(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    """The outputs pass the call's own ``check`` (a property rather than values)."""
    call, what = e.call, e.call.label
    report = _answered(call, observation)
    items = report.get("items") if isinstance(report, dict) and \
        report.get("kind") == "tuple" else [report]
    problem = call.check([_decode(item, what) for item in (items or [])])
    if problem:
        raise Mismatch("values", f"{what}: {problem}")
    _check_effects(e, observation)


def _equals_the_reference(e: Expected, observation: dict, seen: dict[str, dict]) -> None:
    """The outputs equal the reference's (close to them, for floating point)."""
    what = e.call.label
    outputs = _outputs(_answered(e.call, observation), len(e.outputs), what)
    for i, (report, want) in enumerate(zip(outputs, e.outputs, strict=True)):
        _compare(report, want, what if len(e.outputs) == 1 else f"{what}, result {i + 1}")
    _check_effects(e, observation)


class Mode(NamedTuple):
    """One way of judging a call: the calls it applies to, and its checker (which raises
    :class:`Mismatch`)."""

    name: str
    applies: Callable[[Call], bool]
    check: Callable[[Expected, dict, dict[str, dict]], None]


# A call is judged in the first mode that applies to it.
MODES = (
    Mode("raises", lambda call: call.expect_error is not None, _raises),
    Mode("observed only",
         lambda call: call.expect is None and call.same_as is None and call.check is None,
         _observed_only),
    Mode("same as another call", lambda call: call.same_as is not None, _same_as),
    Mode("passes its check", lambda call: call.check is not None, _passes_its_check),
    Mode("equals the reference", lambda call: True, _equals_the_reference),
)


def _answered(call: Call, observation: dict) -> Any:
    """The report of the call's outputs; :class:`Mismatch` if the call raised, called a
    forbidden function, or reported no outputs."""
    what = call.label
    if "error" in observation:
        raise Mismatch("raises",
                       f"{what}: your code raised {str(observation['error'])[:MESSAGE_LIMIT]}")
    if "outputs" not in observation:
        raise Mismatch("malformed", f"{what}: the report is malformed")
    forbidden = observation.get("forbidden")
    if forbidden:
        names = ", ".join(str(name) for name in forbidden) if isinstance(forbidden, list) \
            else "a forbidden function"
        raise Mismatch("forbidden",
                       f"{what}: your code called {names}, which graded code must not call")
    return observation["outputs"]


def _check_effects(e: Expected, observation: dict) -> None:
    """Beyond the outputs: no tensor argument changed in place, the stand-ins called as
    the contract says (unless the student's code computed their parts itself), and the
    gradients, where the call compares them."""
    call, what = e.call, e.call.label
    tensors = [a for a in call.args if isinstance(a, torch.Tensor)]
    after = [a for a in observation.get("inputs_after", []) if a is not None]
    if len(after) != len(tensors):
        raise Mismatch("malformed", f"{what}: the report is malformed")
    for position, (report, original) in enumerate(zip(after, tensors, strict=True)):
        try:
            _compare(report, original, what, exact=True)
        except Mismatch:
            raise Mismatch("in place", f"{what}: tensor argument {position + 1} was modified in "
                           "place") from None
    if not observation.get("inline"):
        _check_stand_ins(call, observation.get("stand_in_calls", {}), what)
    if e.mix is not None:
        _check_gradients(e, observation.get("gradients"), what)


def _check_error(name: str, observation: dict, what: str) -> None:
    """The call must have raised the exception class ``name``."""
    error = observation.get("error")
    if error is None:
        raise Mismatch("raises", f"{what}: expected {name} to be raised, but nothing was raised")
    if str(error).split(":")[0].strip() != name:
        raise Mismatch("raises", f"{what}: expected {name} to be raised, but your code raised "
                       f"{str(error)[:MESSAGE_LIMIT]}")


def _check_arguments(arguments: Any, expected: tuple, where: str) -> None:
    if not isinstance(arguments, list) or len(arguments) < 1:
        raise Mismatch("arguments", f"{where} was called without arguments")
    if len(arguments) > len(expected):
        raise Mismatch("arguments", f"{where} was given {len(arguments)} arguments, expected "
                       f"{len(expected)}")
    given = arguments + [{"kind": "None"}] * (len(expected) - len(arguments))
    for position, (report, want) in enumerate(zip(given, expected, strict=True)):
        what = f"argument {position + 1} given to {where}"
        if want is ANY:
            continue
        if want is None:
            if not isinstance(report, dict) or report.get("kind") != "None":
                raise Mismatch("arguments", f"{what} should be None")
        elif isinstance(want, torch.Tensor | Partial):
            try:
                _compare(report, want, what)
            except Mismatch as mismatch:
                if mismatch.kind != "values":
                    raise
                raise Mismatch("arguments", str(mismatch)) from None
        elif not isinstance(report, dict) or report.get("value") != want:
            raise Mismatch("arguments", f"{what} should be {want!r}")


def _check_stand_ins(call: Call, recorded: Any, what: str) -> None:
    for name, stand_in in call.stand_ins.items():
        calls = recorded.get(name, []) if isinstance(recorded, dict) else None
        if not isinstance(calls, list):
            raise Mismatch("malformed", f"{what}: the report is malformed")
        shown = name.removeprefix("self.")
        if stand_in.script:
            if len(calls) != len(stand_in.script):
                raise Mismatch("calls", f"{what}: {shown} was called {len(calls)} times, expected "
                               f"{len(stand_in.script)}")
            for step, (arguments, (expected, _)) in enumerate(zip(calls, stand_in.script,
                                                                 strict=True)):
                _check_arguments(arguments, expected, f"{what}: {shown} (call {step + 1})")
        elif stand_in.table:
            continue                # matched in the kernel: a call matching no entry raised
        else:
            if stand_in.times is not None and len(calls) != stand_in.times:
                raise Mismatch("calls", f"{what}: {shown} was called {len(calls)} times, expected "
                               f"{stand_in.times}")
            for arguments in calls:
                _check_arguments(arguments, stand_in.expected_args, f"{what}: {shown}")


def _check_gradients(e: Expected, report: Any, what: str) -> None:
    if not isinstance(report, dict):
        raise Mismatch("gradient", f"{what}: the gradients were not reported")
    if "error" in report:
        raise Mismatch("gradient", f"{what}: computing gradients through your code raised "
                       f"{str(report['error'])[:MESSAGE_LIMIT]}")
    grads = report.get("grads")
    if not isinstance(grads, list) or len(grads) != len(e.grads):
        raise Mismatch("gradient", f"{what}: the gradients were not reported")
    for position, (actual, want) in enumerate(zip(grads, e.grads, strict=True)):
        _check_gradient(actual, want, f"tensor argument {position + 1}", what)
    if not e.parameters:
        return
    by_parameter = report.get("parameter_grads")
    if not isinstance(by_parameter, list) or len(by_parameter) != len(e.parameters):
        raise Mismatch("gradient", f"{what}: the gradients were not reported")
    for name, actual, want in zip(e.parameters, by_parameter, e.parameter_grads, strict=True):
        if isinstance(actual, dict) and actual.get("kind") == "missing":
            raise Mismatch("missing parameter", f"{what}: your module has no parameter {name}")
        _check_gradient(actual, want, f"parameter {name}", what)


def _check_gradient(actual: Any, want: torch.Tensor | None, of: str, what: str) -> None:
    if want is None or (actual is None and not bool(want.any())):
        return      # no gradient expected, or expected exactly zero and none flows
    if actual is None:
        raise Mismatch("gradient", f"{what}: no gradient flows back to {of}")
    try:
        _compare(actual, want, f"{what}, gradient of {of}")
    except Mismatch as mismatch:
        if mismatch.kind != "values":
            raise
        raise Mismatch("gradient", str(mismatch)) from None


def failures(expectations: list[Expected], payload: Any) -> Iterator[Failure]:
    """Every way ``payload`` (the kernel's report) disagrees with ``expectations``."""
    observations = payload.get("observations") if isinstance(payload, dict) else None
    if not isinstance(observations, list):
        yield Failure("*", "the hidden tests' report is malformed", "malformed")
        return
    by_label = {}
    for observation in observations:
        if isinstance(observation, dict) and isinstance(observation.get("label"), str):
            by_label.setdefault(observation["label"], observation)
    for e in expectations:
        observation = by_label.get(e.call.label)
        if observation is None:
            yield Failure(e.call.label, f"{e.call.label}: not reported (the hidden tests did "
                          "not finish)", "not reported")
            continue
        try:
            _check_call(e, observation, by_label)
        except Mismatch as mismatch:
            yield Failure(e.call.label, str(mismatch), mismatch.kind)


def summary(problems: list[Failure], total: int) -> str | None:
    """``None`` if nothing failed, else the first failure and how many more there are."""
    if not problems:
        return None
    more = f" (and {len(problems) - 1} more of {total} hidden checks)" \
        if len(problems) > 1 else ""
    return problems[0].message + more


def judge(expectations: list[Expected], payload: Any) -> str | None:
    """``None`` if every case passed, else a message naming the first failure."""
    return summary(list(failures(expectations, payload)), len(expectations))
