"""The grader's side of the cases: reference answers computed here, inputs shipped there.

:func:`load` runs a suite's references (once per process and file: the grading fork server
computes them for every child it forks); :func:`write_cases` puts the probe and the cases'
*inputs* — only the inputs — into the folder the sandboxed kernel works in, where
:mod:`autograder.hidden.probe` reports what the student's code returned on them.
"""

from __future__ import annotations

import importlib.util
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

import torch

from ..course.files import HELPERS_FILE
from . import probe
from .vocabulary import Call, Helper, Module, Partial, Student, Suite, expected_tensor


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
        value = expected_tensor(output)
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
    loss = sum((expected_tensor(o) * m).sum() for o, m in zip(results, mix, strict=True))
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
    children: :mod:`autograder.batch.preload`)."""
    return _load(str(Path(path).resolve()))


def loaded_suites() -> list[str]:
    """The suites whose references this process holds (computed here, or inherited from
    the fork server that forked it), by resolved path."""
    return sorted(_loaded)


_loaded: set[str] = set()


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
    _loaded.add(path)
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
    (folder / probe.PROBE_FILE).write_text(Path(probe.__file__).read_text())
    helpers = Path(suite_path).parent / HELPERS_FILE
    if helpers.exists():
        (folder / f"{probe.HELPERS_MODULE}.py").write_text(helpers.read_text())


def remove_cases(folder: Path) -> None:
    for name in (probe.CASES_FILE, probe.PROBE_FILE, f"{probe.HELPERS_MODULE}.py"):
        (folder / name).unlink(missing_ok=True)
