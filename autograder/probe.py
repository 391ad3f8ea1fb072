"""The kernel side of the hidden tests: observe the student's code, never judge it.

At grading time this file is copied next to the submitted notebook as
``_autograder_probe.py`` together with ``_autograder_cases.pt``, the inputs of the hidden
test cases (written by :mod:`autograder.hidden` in the grader's process). Each test cell
ends with a hidden region that calls :func:`report`, which runs the student's functions
on those inputs and displays what came out — values, the inputs after the call (to see
in-place changes), gradients, the arguments given to a stand-in — as one output of MIME
type :data:`MIME`.

Nothing here decides whether an answer is right: the expected values never enter the
student's process. The grader compares the reported values in its own process
(:mod:`autograder.hidden`), so patching ``torch.allclose``, builtins or this module can
change what is reported, but cannot make a wrong answer match the grader's reference.

Only the standard library and torch are used: the sandbox has nothing else to offer.
"""

from __future__ import annotations

import base64
import math
from typing import Any

import torch

MIME = "application/vnd.autograder.observations+json"
CASES_FILE = "_autograder_cases.pt"
_MESSAGE_LIMIT = 300


def _neg_sq_distance(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """query (B, d), keys (B, n, d) -> (B, n): minus the squared distance."""
    return -((keys - query.unsqueeze(1)) ** 2).sum(-1)


def _sum_product(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """query (B, d_q), keys (B, n, d_k) -> (B, n): sum of the key times mean of the query."""
    return keys.sum(-1) * query.mean(-1, keepdim=True)


# Callables that a test may pass to the student's code (the grader has the same ones).
HELPERS = {"neg_sq_distance": _neg_sq_distance, "sum_product": _sum_product}


def encode(value: Any) -> dict:
    """A JSON-able description of ``value``: tensors as raw bytes, dtype and shape."""
    if isinstance(value, torch.Tensor):
        kind = "tensor" if type(value) is torch.Tensor else "tensor subclass"
        with torch._C.DisableTorchFunctionSubclass():
            tensor = torch.Tensor.detach(value).cpu().contiguous()
            dtype = str(tensor.dtype).removeprefix("torch.")
            if tensor.dtype not in (torch.float32, torch.float64, torch.int64, torch.bool):
                tensor = tensor.to(torch.float64)
            data = base64.b64encode(tensor.numpy().tobytes()).decode("ascii")
        return {"kind": kind, "type": type(value).__qualname__, "dtype": dtype,
                "stored": str(tensor.dtype).removeprefix("torch."),
                "shape": list(tensor.shape), "data": data}
    if value is None:
        return {"kind": "None"}
    if isinstance(value, (tuple, list)) and type(value) in (tuple, list):
        return {"kind": type(value).__name__, "items": [encode(item) for item in value]}
    if type(value) in (bool, int, str) or (type(value) is float and math.isfinite(value)):
        return {"kind": type(value).__name__, "value": value}
    return {"kind": "other", "type": type(value).__qualname__}


def _message(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}" if str(error) else type(error).__name__
    return text[:_MESSAGE_LIMIT]


class _StandIn:
    """Replaces a student function during a call: records its arguments, returns a given
    result (connected to the first argument for gradients when ``jvp`` says how)."""

    def __init__(self, result: torch.Tensor, jvp: str | None):
        self.result, self.jvp, self.calls = result, jvp, []

    def __call__(self, *args, **kwargs):
        given = [*args, *kwargs.values()]
        self.calls.append([encode(a) for a in given])
        weights = self.result
        first = given[0] if given else None
        if self.jvp == "softmax" and isinstance(first, torch.Tensor) and first.requires_grad:
            delta = first - first.detach()          # zero, but carries the gradient
            weights = weights + weights * delta - weights * (weights * delta).sum(-1, True)
        return weights


def _resolve(arg: Any, namespace: dict, grad: bool) -> Any:
    if isinstance(arg, torch.Tensor):
        copy = arg.detach().clone()
        return copy.requires_grad_(grad and copy.is_floating_point())
    if isinstance(arg, dict) and "helper" in arg:
        return HELPERS[arg["helper"]]
    if isinstance(arg, dict) and "student" in arg:
        return namespace[arg["student"]]
    return arg


def _call(case: dict, namespace: dict, grad: bool) -> tuple[Any, list, dict]:
    """Run one case on fresh copies of its inputs; stand-ins are removed afterwards."""
    args = [_resolve(a, namespace, grad) for a in case["args"]]
    kwargs = {k: _resolve(a, namespace, grad) for k, a in case["kwargs"].items()}
    stand_ins = {name: _StandIn(spec["result"], spec.get("jvp"))
                 for name, spec in case.get("stand_ins", {}).items()}
    saved = {name: namespace.get(name) for name in stand_ins}
    namespace.update(stand_ins)
    try:
        result = namespace[case["function"]](*args, **kwargs)
    finally:
        namespace.update(saved)
    return result, args, stand_ins


def observe(case: dict, namespace: dict) -> dict:
    """What the student's code does on one case, as plain data."""
    if not callable(namespace.get(case["function"])):
        return {"error": f"NameError: {case['function']} is not defined"}
    try:
        result, args, stand_ins = _call(case, namespace, grad=False)
    except Exception as error:        # the student's code raised: report, do not judge
        return {"error": _message(error)}
    observation = {"outputs": encode(result),
                   "inputs_after": [encode(a) if isinstance(a, torch.Tensor) else None
                                    for a in args],
                   "stand_in_calls": {name: s.calls for name, s in stand_ins.items()}}
    if case.get("mix") is not None:
        observation["gradients"] = _gradients(case, namespace)
    return observation


def _gradients(case: dict, namespace: dict) -> dict:
    """Gradients of sum(output * mix) with respect to every floating-point argument."""
    try:
        result, args, _ = _call(case, namespace, grad=True)
        outputs = result if isinstance(result, tuple) else (result,)
        loss = sum((o * m).sum() for o, m in zip(outputs, case["mix"], strict=True))
        inputs = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
            return {"grads": [None] * len(inputs)}
        grads = torch.autograd.grad(loss, inputs, allow_unused=True)
        return {"grads": [None if g is None else encode(g) for g in grads]}
    except Exception as error:
        return {"error": _message(error)}


def report(grade_id: str) -> None:
    """Run the hidden cases of ``grade_id`` and display the observations."""
    from IPython import get_ipython
    from IPython.display import display

    namespace = get_ipython().user_ns
    cases = torch.load(CASES_FILE, weights_only=True)[grade_id]
    observations = [{"label": case["label"], **observe(case, namespace)} for case in cases]
    display({MIME: {"grade_id": grade_id, "observations": observations}}, raw=True)
