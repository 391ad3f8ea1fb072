"""The kernel side of the hidden tests: observe the student's code, never judge it.

At grading time this file is copied next to the submitted notebook as
``_autograder_probe.py`` together with ``_autograder_cases.pt``, the inputs of the hidden
test cases (written by :mod:`autograder.hidden.references` in the grader's process), and, if the
assignment has one, ``_autograder_helpers.py`` (its ``probe_helpers.py``: callables both
sides share, such as a tiny model to train). Each test cell ends with a hidden region that
calls :func:`report`, which runs the student's code on those inputs and displays what came
out — values, the inputs after the call (to see in-place changes), gradients, the arguments
given to a stand-in, the forbidden functions it called — as one output of MIME type
:data:`MIME`.

A case calls a function of the notebook, a method of an instance of one of the notebook's
classes (built with given arguments and loaded with a given ``state_dict``), or a helper
(which may in turn be given the student's functions and classes).

Nothing here decides whether an answer is right: the expected values never enter the
student's process. The grader compares the reported values in its own process
(:mod:`autograder.hidden.judging`), so patching ``torch.allclose``, builtins or this module can
change what is reported, but cannot make a wrong answer match the grader's reference.

Only the standard library and torch are used: the sandbox has nothing else to offer.
"""

from __future__ import annotations

import base64
import importlib
import math
import os
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

MIME = "application/vnd.autograder.observations+json"
CASES_FILE = "_autograder_cases.pt"
PROBE_FILE = "_autograder_probe.py"    # this file, as the kernel imports it
HELPERS_MODULE = "_autograder_helpers"
MESSAGE_LIMIT = 300
_SELF = "self."          # a stand-in for an attribute of the instance under test


def _neg_sq_distance(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """query (B, d), keys (B, n, d) -> (B, n): minus the squared distance."""
    return -((keys - query.unsqueeze(1)) ** 2).sum(-1)


def _sum_product(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """query (B, d_q), keys (B, n, d_k) -> (B, n): sum of the key times mean of the query."""
    return keys.sum(-1) * query.mean(-1, keepdim=True)


# Callables that a test may pass to the student's code (the grader has the same ones).
HELPERS = {"neg_sq_distance": _neg_sq_distance, "sum_product": _sum_product}

# Functions graded code must not call (the contract's rule): watched during every call.
FORBIDDEN = {
    torch.nn.functional.scaled_dot_product_attention:
        "torch.nn.functional.scaled_dot_product_attention",
    torch.nn.functional.multi_head_attention_forward:
        "torch.nn.functional.multi_head_attention_forward",
}


def helpers() -> dict:
    """This module's helpers and the assignment's own (``_autograder_helpers.HELPERS``)."""
    try:
        extra = importlib.import_module(HELPERS_MODULE).HELPERS
    except ModuleNotFoundError:
        extra = {}
    return {**HELPERS, **extra}


class _Watch(TorchFunctionMode):
    """Records calls of :data:`FORBIDDEN` functions (``nn.MultiheadAttention`` calls one)."""

    def __init__(self):
        super().__init__()
        self.seen: list[str] = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        name = FORBIDDEN.get(func)
        if name is not None and name not in self.seen:
            self.seen.append(name)
        return func(*args, **(kwargs or {}))


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
    return text[:MESSAGE_LIMIT]


class _StandIn:
    """Replaces a student function or method during a call: records its arguments and
    returns given results — one for every call, or the next of a script, or what a helper
    returns, or the result of the entry of a table whose arguments match the given ones —
    connected to the first argument for gradients when ``jvp`` says how."""

    def __init__(self, spec: dict, name: str = "a stand-in"):
        self.results = spec.get("results", [])
        self.repeat = spec.get("repeat", False)
        self.jvp = spec.get("jvp")
        self.helper = helpers()[spec["helper"]] if spec.get("helper") else None
        self.table = spec.get("table")
        self.name = name.removeprefix(_SELF)
        self.calls: list[list[dict]] = []
        self.count = 0          # every call, a table's included (whose arguments it matches)

    def __call__(self, *args, **kwargs):
        given = [*args, *kwargs.values()]
        self.count += 1
        if self.table is not None:
            return self._look_up(given)
        self.calls.append([encode(a) for a in given])
        if self.helper is not None:
            return self.helper(*args, **kwargs)
        index = 0 if self.repeat else len(self.calls) - 1
        if index >= len(self.results):
            raise RuntimeError(f"called more often than expected ({len(self.results)} times)")
        result = _copy(self.results[index])     # the student may change it in place
        first = given[0] if given else None
        if self.jvp == "softmax" and isinstance(first, torch.Tensor) and first.requires_grad:
            delta = first - first.detach()          # zero, but carries the gradient
            result = result + result * delta - result * (result * delta).sum(-1, True)
        return result

    def _look_up(self, given: list) -> Any:
        for expected, result in self.table:
            if len(given) <= len(expected) and all(
                    _matches(a, e) for a, e in
                    zip(given + [None] * (len(expected) - len(given)), expected, strict=True)):
                return _copy(result)
        shown = ", ".join(f"{tuple(a.shape)} {str(a.dtype).removeprefix('torch.')}"
                          if isinstance(a, torch.Tensor) else type(a).__name__ for a in given)
        raise RuntimeError(f"{self.name} was called with arguments that match none of the "
                           f"calls this test expects (given: {shown})")


def _matches(given: Any, expected: Any) -> bool:
    """Whether an argument matches a table entry's (see
    ``autograder.hidden.vocabulary.StandIn``)."""
    if isinstance(expected, dict) and expected.get("any"):
        return True
    if not isinstance(expected, torch.Tensor):
        return type(given) is type(expected) and given == expected
    if type(given) is not torch.Tensor or given.dtype != expected.dtype:
        return False
    given = given.detach()
    if expected.dtype == torch.bool:
        try:
            return bool(torch.equal(torch.broadcast_to(given, expected.shape), expected))
        except RuntimeError:          # does not broadcast
            return False
    rtol, atol = (1e-7, 1e-9) if expected.dtype == torch.float64 else (1e-4, 1e-5)
    return given.shape == expected.shape and bool(torch.allclose(given, expected, rtol, atol))


def _copy(result: Any) -> Any:
    if isinstance(result, torch.Tensor):
        return result.clone()
    if isinstance(result, (tuple, list)):
        return type(result)(_copy(item) for item in result)
    return result


def _build(spec: dict, namespace: dict) -> Any:
    """An instance of the student's class ``spec["module"]`` with ``spec["state"]`` loaded
    (converted to ``spec["dtype"]`` first, if given)."""
    instance = namespace[spec["module"]](*spec.get("init", []))
    if spec.get("dtype") and isinstance(instance, torch.nn.Module):
        instance.to(getattr(torch, spec["dtype"]))
    if spec.get("state") is not None:
        instance.load_state_dict(spec["state"], strict=True)
    if isinstance(instance, torch.nn.Module):
        instance.eval()
    return instance


def _resolve(arg: Any, namespace: dict, grad: bool) -> Any:
    if isinstance(arg, torch.Tensor):
        copy = arg.detach().clone()
        return copy.requires_grad_(grad and copy.is_floating_point())
    if isinstance(arg, dict) and "helper" in arg:
        return helpers()[arg["helper"]]
    if isinstance(arg, dict) and "student" in arg:
        return namespace[arg["student"]]
    if isinstance(arg, dict) and "module" in arg:
        return _build(arg, namespace)
    if isinstance(arg, list):
        return [_resolve(item, namespace, grad) for item in arg]
    return arg


def _owner(path: str, instance: Any, namespace: dict) -> tuple[Any, str]:
    """(object, attribute) that a stand-in named ``path`` replaces."""
    if not path.startswith(_SELF):
        return namespace, path
    *parents, attribute = path.removeprefix(_SELF).split(".")
    owner = instance
    for name in parents:
        owner = getattr(owner, name)
    return owner, attribute


def _call(case: dict, namespace: dict, grad: bool,
          stand_in: bool = True) -> tuple[Any, list, dict, Any, list]:
    """Run one case on fresh copies of its inputs, with its stand-ins in place (none
    without ``stand_in``); stand-ins are removed afterwards.

    Returns (result, args, stand-ins, instance, forbidden functions called).
    """
    args = [_resolve(a, namespace, grad) for a in case["args"]]
    kwargs = {k: _resolve(a, namespace, grad) for k, a in case["kwargs"].items()}
    instance = _build(case["instance"], namespace) if case.get("instance") else None
    if instance is not None and grad:
        for parameter in instance.parameters():
            parameter.requires_grad_(True)
    function = case["function"]
    if isinstance(function, dict):
        target = helpers()[function["helper"]]
    elif instance is not None:
        target = getattr(instance, function)
    else:
        target = namespace[function]
    stand_ins = {path: _StandIn(spec, path) for path, spec in case.get("stand_ins", {}).items()
                 if stand_in}
    saved = []
    for path, stand_in in stand_ins.items():
        owner, attribute = _owner(path, instance, namespace)
        if owner is namespace:
            saved.append((owner, attribute, namespace.get(attribute), False))
            namespace[attribute] = stand_in
        else:
            saved.append((owner, attribute, owner.__dict__.get(attribute), True))
            object.__setattr__(owner, attribute, stand_in)
    watch = _Watch()
    try:
        with watch:
            result = target(*args, **kwargs)
    finally:
        for owner, attribute, before, on_object in reversed(saved):
            if not on_object:
                owner[attribute] = before
            elif before is None:
                object.__delattr__(owner, attribute)
            else:
                object.__setattr__(owner, attribute, before)
    return result, args, stand_ins, instance, watch.seen


def _parameters(instance: Any, names: list[str]) -> list:
    """The instance's parameters named ``names`` (None where it has no such parameter)."""
    if instance is None:
        return []
    own = dict(instance.named_parameters())
    return [own.get(name) for name in names]


def observe(case: dict, namespace: dict) -> dict:
    """What the student's code does on one case, as plain data.

    A case with stand-ins isolates a part of the student's code: the parts it calls are
    replaced. If the code does not call every one of them — it computes that part itself,
    as the contract allows — the case runs again without any stand-in, and the observation
    says so (``"inline"``): the grader then compares it with the reference computed end
    to end with the same weights.
    """
    function = case["function"]
    if isinstance(function, str) and not case.get("instance") \
            and not callable(namespace.get(function)):
        return {"error": f"NameError: {function} is not defined"}
    if case.get("instance") and not callable(namespace.get(case["instance"]["module"])):
        return {"error": f"NameError: {case['instance']['module']} is not defined"}
    observation = _observation(case, namespace, stand_in=True)
    unused = observation.pop("not_called", [])
    if unused and case.get("inline"):
        return {**_observation(case, namespace, stand_in=False), "inline": True,
                "not_called": unused}
    return observation


def _observation(case: dict, namespace: dict, stand_in: bool) -> dict:
    """One run of a case (with its stand-ins, or none), its gradients after; with
    stand-ins, ``"not_called"`` lists those the code never called."""
    seed(case.get("seed", 0))
    try:
        result, args, stand_ins, _, forbidden = _call(case, namespace, grad=False,
                                                      stand_in=stand_in)
    except Exception as error:        # the student's code raised: report, do not judge
        return {"error": _message(error)}
    observation = {"outputs": encode(result),
                   "inputs_after": [encode(a) if isinstance(a, torch.Tensor) else None
                                    for a in args],
                   "stand_in_calls": {path: s.calls for path, s in stand_ins.items()},
                   "not_called": [path for path, s in stand_ins.items() if s.count == 0],
                   "forbidden": forbidden}
    if case.get("mix") is not None:
        observation["gradients"] = _gradients(case, namespace, stand_in)
    return observation


def _gradients(case: dict, namespace: dict, stand_in: bool = True) -> dict:
    """Gradients of sum(output * mix) with respect to every floating-point argument and
    every parameter of the instance named in ``case["parameters"]``."""
    seed(case.get("seed", 0))
    try:
        result, args, _, instance, _ = _call(case, namespace, grad=True, stand_in=stand_in)
        outputs = result if isinstance(result, tuple) else (result,)
        loss = sum((o * m).sum() for o, m in zip(outputs, case["mix"], strict=True))
        inputs = [a for a in args if isinstance(a, torch.Tensor) and a.requires_grad]
        parameters = _parameters(instance, case.get("parameters", []))
        leaves = inputs + [p for p in parameters if p is not None]
        if not isinstance(loss, torch.Tensor) or not loss.requires_grad:
            grads = [None] * len(leaves)
        else:
            grads = list(torch.autograd.grad(loss, leaves, allow_unused=True))
        found = iter(grads[len(inputs):])
        by_parameter = []
        for parameter in parameters:
            if parameter is None:
                by_parameter.append({"kind": "missing"})
            else:
                grad = next(found)
                by_parameter.append(None if grad is None else encode(grad))
        return {"grads": [None if g is None else encode(g) for g in grads[:len(inputs)]],
                "parameter_grads": by_parameter}
    except Exception as error:
        return {"error": _message(error)}


def seed(value: int) -> None:
    """Seed torch's (CPU) random numbers, as ``torch.manual_seed`` does on a machine
    without accelerators — without its bookkeeping for them, which records the calling
    stack three times at every call (a millisecond each, over a hundred calls a notebook).
    Both sides seed with it."""
    torch.default_generator.manual_seed(value)


_loaded: tuple[tuple, dict] | None = None     # (the cases file's identity, its content)


def _all_cases() -> dict:
    """{grade_id: cases} as the cases file holds them now: read again whenever the file
    is another or has changed (whoever replaces it is heard), else as read last time
    (each read unpickles every case of every test: most of a test cell's own time)."""
    global _loaded
    status = os.stat(CASES_FILE)
    identity = (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)
    if _loaded is None or _loaded[0] != identity:
        _loaded = (identity, torch.load(CASES_FILE, weights_only=True))
    return _loaded[1]


def report(grade_id: str) -> None:
    """Run the hidden cases of ``grade_id`` and display the observations."""
    from IPython import get_ipython
    from IPython.display import display

    namespace = get_ipython().user_ns
    cases = _all_cases()[grade_id]
    observations = [{"label": case["label"], **observe(case, namespace)} for case in cases]
    display({MIME: {"grade_id": grade_id, "observations": observations}}, raw=True)
