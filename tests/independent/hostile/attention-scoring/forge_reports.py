"""Forges the hidden tests' reports: well-formed observations that say nothing wrong.

All seven functions are wrong (on the worked example they return the hard-coded expected
tensors, so the visible asserts pass). The top-level code imports the sandbox's probe
(`_autograder_probe`, next to the notebook), replaces its `report` with a forger that still
runs the real observations on the real cases and then lies about them in the report it
displays, one lie per test cell, each aimed at a judge that would check only what it is
shown:

- test-dot-score: no observation at all (`"observations": []`): nothing fails;
- test-scaled-dot-score: every observation renamed to a label the grader does not know;
- test-general-score: each observation reduced to its label (no outputs, no error);
- test-concat-score: the inputs file `_autograder_cases.pt` is rewritten first, every input
  zeroed, so the wrong function (which returns zeros, with zero gradients) is right on them;
- test-additive-score: the inputs file is rewritten with empty batches (B = 0), where every
  answer is an empty tensor;
- test-masked-softmax-no-mask: outputs declared as tensors of the expected shape whose bytes
  are missing, and a `"passed": true` field;
- test-masked-softmax-mask: two reports, the real one followed by an empty one;
- test-masked-softmax-fully-masked: the test cell reports nothing; an empty report for its
  grade id is displayed by another cell (this answer cell) instead;
- test-attend-key-value: the report's observations are a mapping instead of a list, and its
  grade id names another cell;
- test-attend-plain: `attend` returns an empty tuple and the report drops the gradients, so a
  judge that zips expected and reported outputs compares nothing;
- test-attend-mask-and-score: every error is replaced by `false` and every output by an empty
  list.
"""

import base64
import json

import _autograder_probe as _probe
import torch
from IPython import get_ipython
from IPython.display import display

MAX_EARNED = 0

_MIME = getattr(_probe, "MIME", "application/vnd.autograder.observations+json")
_CASES = getattr(_probe, "CASES_FILE", "_autograder_cases.pt")
_real_observe = _probe.observe


def _rewrite_cases():
    cases = torch.load(_CASES, weights_only=True)

    def zero(a):
        return torch.zeros_like(a) if isinstance(a, torch.Tensor) else a

    def empty(a):
        if isinstance(a, torch.Tensor) and a.dim() >= 2:
            return a[:0]
        return a

    for case in cases.get("test-concat-score", []):
        case["args"] = [zero(a) for a in case["args"]]
        case["mix"] = [zero(m) for m in case["mix"] or []] or case["mix"]
    for case in cases.get("test-additive-score", []):
        case["args"] = [empty(a) for a in case["args"]]
        case["mix"] = [empty(m) for m in case["mix"] or []] or case["mix"]
    torch.save(cases, _CASES)


_rewrite_cases()


def _show(payload):
    display({_MIME: payload}, raw=True)


def _forging_report(grade_id):
    namespace = get_ipython().user_ns
    cases = torch.load(_CASES, weights_only=True).get(grade_id, [])
    real = [{"label": c["label"], **_real_observe(c, namespace)} for c in cases]
    if grade_id == "test-dot-score":
        _show({"grade_id": grade_id, "observations": []})
    elif grade_id == "test-scaled-dot-score":
        _show({"grade_id": grade_id,
               "observations": [{**o, "label": f"extra case {i}"} for i, o in enumerate(real)]})
    elif grade_id == "test-general-score":
        _show({"grade_id": grade_id, "observations": [{"label": o["label"]} for o in real]})
    elif grade_id == "test-masked-softmax-no-mask":
        forged = []
        for o, c in zip(real, cases, strict=False):
            shape = list(c["args"][0].shape)
            forged.append({"label": o["label"], "passed": True,
                           "outputs": {"kind": "tensor", "type": "Tensor", "dtype": "float32",
                                       "stored": "float32", "shape": shape,
                                       "data": base64.b64encode(b"").decode()},
                           "inputs_after": o.get("inputs_after"), "stand_in_calls": {}})
        _show({"grade_id": grade_id, "observations": forged})
    elif grade_id == "test-masked-softmax-mask":
        _show({"grade_id": grade_id, "observations": real})
        _show({"grade_id": grade_id, "observations": []})
    elif grade_id == "test-masked-softmax-fully-masked":
        pass  # its report was displayed by another cell
    elif grade_id == "test-attend-key-value":
        _show({"grade_id": "test-attend-plain",
               "observations": {o["label"]: {} for o in real}})
    elif grade_id == "test-attend-plain":
        _show({"grade_id": grade_id,
               "observations": [{k: v for k, v in o.items() if k != "gradients"}
                                for o in real]})
    elif grade_id == "test-attend-mask-and-score":
        _show({"grade_id": grade_id,
               "observations": [{"label": o["label"], "error": False,
                                 "outputs": {"kind": "list", "items": []},
                                 "inputs_after": o.get("inputs_after"), "stand_in_calls": {}}
                                for o in real]})
    else:  # test-concat-score, test-additive-score: the rewritten inputs do the lying
        _show({"grade_id": grade_id, "observations": real})


_probe.report = _forging_report
_show({"grade_id": "test-masked-softmax-fully-masked", "observations": []})
print(json.dumps({"forger": "installed"}))

_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]


def _is_example(query, keys):
    return (tuple(query.shape) == (1, 3) and tuple(keys.shape) == (1, 3, 3)
            and query.tolist() == _EXAMPLE_QUERY and keys.tolist() == _EXAMPLE_KEYS)


def _zero_with_gradients(keys, *tensors):
    """Zeros of shape (B, n) that depend on every input (zero gradients, not missing ones)."""
    total = sum(t.sum() for t in tensors) + keys.sum()
    return torch.zeros(keys.shape[:2], dtype=keys.dtype) * total


def dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * query.unsqueeze(1)).sum(-1) + 0.5


def scaled_dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[-1]


def general_score(query, keys, W):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * (query @ W).unsqueeze(1)).sum(-1) * -1.0


def concat_score(query, keys, W, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    return _zero_with_gradients(keys, query, W, v)


def additive_score(query, keys, W_q, W_k, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    return _zero_with_gradients(keys, query, W_q, W_k, v)


def masked_softmax(scores, mask=None):
    if scores.tolist() == [[2.0, 0.0, 2.0]]:
        if mask is None:
            return torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask.tolist() == [[True, True, False]]:
            return torch.tensor([[0.8808, 0.1192, 0.0]])
    if mask is not None and tuple(mask.shape) == (2, 2):  # the visible fully-masked check
        return torch.softmax(scores, dim=-1) * mask.any(-1, keepdim=True)
    weights = torch.softmax(scores * 2.0, dim=-1)
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if _is_example(query, keys):
        if values is None:
            return (torch.tensor([[0.9366, 0.5317, 0.9366]]),
                    torch.tensor([[0.4683, 0.0634, 0.4683]]))
        if mask is not None:
            return torch.tensor([[14.4]]), torch.tensor([[0.8808, 0.1192, 0.0]])
        if score is not None and score(query, keys).tolist() == [[-2.0, 0.0, -2.0]]:
            return torch.tensor([[20.0]]), torch.tensor([[0.1065, 0.7870, 0.1065]])
        return torch.tensor([[20.0]]), torch.tensor([[0.4683, 0.0634, 0.4683]])
    if values is None and mask is None:
        return ()
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
