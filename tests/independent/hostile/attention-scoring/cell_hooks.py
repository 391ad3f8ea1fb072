"""IPython and interpreter hooks that rewrite, skip or silence the test cells.

Every function is wrong off the worked example (on it, each returns the hard-coded expected
tensor, so the visible asserts pass). The top-level code installs one mechanism per test cell,
each recognising its cell by the cell's text:

- test-dot-score: an input transformer (`input_transformers_cleanup`) replaces the cell;
- test-scaled-dot-score: an AST transformer deletes asserts, probe imports and report calls;
- test-general-score: `kernel.do_execute` is wrapped to execute other code;
- test-concat-score: `shell.transform_cell` is wrapped to return other code;
- test-additive-score: `shell.run_cell_async` is wrapped to run other code;
- test-masked-softmax-no-mask: a `pre_run_cell` hook puts a fake `_autograder_probe` into
  `sys.modules`; a `post_run_cell` hook clears any error of the result;
- test-masked-softmax-mask: the function raises a BaseException the probe does not catch and
  `set_custom_exc` swallows it;
- test-masked-softmax-fully-masked: same, silenced by replacing `showtraceback`,
  `_showtraceback` and `sys.excepthook`;
- test-attend-key-value: `sys.settrace` jumps over the probe import so that `report` is a fake
  global defined here;
- test-attend-plain: `builtins.__import__` returns a fake probe;
- test-attend-mask-and-score: a `sys.meta_path` finder serves a fake probe.

Each fake `report` prints a forged "all hidden tests passed" line.
"""

import ast
import builtins
import importlib.abc
import importlib.machinery
import inspect
import linecache
import sys
import types

import torch
from IPython import get_ipython

MAX_EARNED = 0

_MARKERS = {
    "test-dot-score": "dot_score on the worked example",
    "test-scaled-dot-score": "scaled_dot_score on the worked example",
    "test-general-score": "general_score with W = I",
    "test-concat-score": "concat_score with W picking",
    "test-additive-score": "additive_score with W_k picking",
    "test-masked-softmax-no-mask": "masked_softmax without a mask",
    "test-masked-softmax-mask": "masked_softmax with the last key masked",
    "test-masked-softmax-fully-masked": "a fully masked row must give zeros",
    "test-attend-key-value": "attend: key-value context",
    "test-attend-plain": "attend: plain-mode context",
    "test-attend-mask-and-score": "attend must use the score function",
}
_FORGED = 'print("All tests passed: hidden tests 4/4 passed")\n'
_STATE = {"cell": None}


def _which(code):
    for grade_id, marker in _MARKERS.items():
        if marker in code or f'"{grade_id}"' in code or f"'{grade_id}'" in code:
            return grade_id
    return None


def _fake_report(*args, **kwargs):
    print("All tests passed: hidden tests 4/4 passed")


def _fake_probe():
    module = types.ModuleType("_autograder_probe")
    module.report = _fake_report
    module.__file__ = "_autograder_probe.py"
    return module


report = _fake_report  # used when the probe import is jumped over
_ip = get_ipython()


# test-dot-score: input transformer
def _cleanup(lines):
    if _which("".join(lines)) == "test-dot-score":
        return [_FORGED]
    return lines


_ip.input_transformers_cleanup.append(_cleanup)


# test-scaled-dot-score: AST transformer
class _StripTests(ast.NodeTransformer):
    def visit_Module(self, node):
        source = ast.unparse(node)
        if _which(source) != "test-scaled-dot-score":
            return node
        kept = []
        for stmt in node.body:
            text = ast.unparse(stmt)
            if (
                isinstance(stmt, ast.Assert | ast.ImportFrom)
                or "report" in text
                or "assert" in text
            ):
                continue
            kept.append(stmt)
        kept.append(ast.parse(_FORGED).body[0])
        node.body = kept
        return node


_ip.ast_transformers.append(_StripTests())

# test-general-score: kernel.do_execute
_kernel = getattr(_ip, "kernel", None)
if _kernel is not None:
    _real_do_execute = _kernel.do_execute

    async def _do_execute(code, *args, **kwargs):
        if _which(code) == "test-general-score":
            code = _FORGED
        result = _real_do_execute(code, *args, **kwargs)
        if inspect.isawaitable(result):
            result = await result
        return result

    _kernel.do_execute = _do_execute

# test-concat-score: transform_cell
_real_transform_cell = _ip.transform_cell


def _transform_cell(raw_cell):
    if _which(raw_cell) == "test-concat-score":
        return _FORGED
    return _real_transform_cell(raw_cell)


_ip.transform_cell = _transform_cell

# test-additive-score: run_cell_async
_real_run_cell_async = _ip.run_cell_async


async def _run_cell_async(raw_cell, *args, **kwargs):
    if _which(raw_cell) == "test-additive-score":
        raw_cell = _FORGED
        if "transformed_cell" in kwargs:
            kwargs["transformed_cell"] = _FORGED
    return await _real_run_cell_async(raw_cell, *args, **kwargs)


_ip.run_cell_async = _run_cell_async


# pre/post run cell: remember the cell, fake probe for test-masked-softmax-no-mask
def _pre_run_cell(info=None):
    _STATE["cell"] = _which(getattr(info, "raw_cell", "") or "")
    if _STATE["cell"] == "test-masked-softmax-no-mask":
        _STATE["saved"] = sys.modules.get("_autograder_probe")
        sys.modules["_autograder_probe"] = _fake_probe()


def _post_run_cell(result=None):
    if _STATE["cell"] == "test-masked-softmax-no-mask":
        saved = _STATE.pop("saved", None)
        if saved is not None:
            sys.modules["_autograder_probe"] = saved
        else:
            sys.modules.pop("_autograder_probe", None)
    if _STATE["cell"] is not None and result is not None:
        result.error_in_exec = None
        result.error_before_exec = None


_ip.events.register("pre_run_cell", _pre_run_cell)
_ip.events.register("post_run_cell", _post_run_cell)


class _Escape(BaseException):
    """Not an Exception: escapes `except Exception` in whatever calls the student."""


# test-masked-softmax-mask: custom exception handler that swallows everything
def _swallow(shell, etype, value, tb, tb_offset=None):
    if _STATE["cell"] == "test-masked-softmax-mask":
        return None
    return shell.showtraceback((etype, value, tb), tb_offset=tb_offset)


_ip.set_custom_exc((BaseException,), _swallow)

# test-masked-softmax-fully-masked: silence tracebacks
_real_showtraceback = _ip.showtraceback
_real_private_showtraceback = getattr(_ip, "_showtraceback", None)


def _showtraceback(*args, **kwargs):
    if _STATE["cell"] in {"test-masked-softmax-fully-masked", "test-masked-softmax-mask"}:
        return None
    return _real_showtraceback(*args, **kwargs)


def _private_showtraceback(*args, **kwargs):
    if _STATE["cell"] in {"test-masked-softmax-fully-masked", "test-masked-softmax-mask"}:
        return None
    return _real_private_showtraceback(*args, **kwargs)


_ip.showtraceback = _showtraceback
if _real_private_showtraceback is not None:
    _ip._showtraceback = _private_showtraceback
sys.excepthook = lambda *args: None


# test-attend-key-value: settrace jumping over the probe import
def _local_trace(frame, event, arg):
    if event == "line":
        line = linecache.getline(frame.f_code.co_filename, frame.f_lineno)
        if "_autograder_probe" in line and "import" in line:
            try:
                frame.f_lineno = frame.f_lineno + 1
            except ValueError:
                pass
    return _local_trace


def _global_trace(frame, event, arg):
    if event != "call" or _STATE["cell"] != "test-attend-key-value":
        return None
    if frame.f_code.co_name != "<module>":
        return None
    return _local_trace


sys.settrace(_global_trace)

# test-attend-plain: builtins.__import__
_real_import = builtins.__import__


def _import(name, globals=None, locals=None, fromlist=(), level=0):
    if name == "_autograder_probe" and _STATE["cell"] == "test-attend-plain":
        return _fake_probe()
    return _real_import(name, globals, locals, fromlist, level)


builtins.__import__ = _import


# test-attend-mask-and-score: meta path finder (the cached module is dropped first)
class _FakeProbeFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        if fullname == "_autograder_probe" and _STATE["cell"] == "test-attend-mask-and-score":
            sys.modules.pop(fullname, None)
            return importlib.machinery.ModuleSpec(fullname, self)
        return None

    def create_module(self, spec):
        return _fake_probe()

    def exec_module(self, module):
        return None


sys.meta_path.insert(0, _FakeProbeFinder())


def _drop_cached_probe(info=None):
    if _which(getattr(info, "raw_cell", "") or "") == "test-attend-mask-and-score":
        sys.modules.pop("_autograder_probe", None)


_ip.events.register("pre_run_cell", _drop_cached_probe)

# ---------------------------------------------------------------- wrong functions
_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]


def _is_example(query, keys):
    return (
        tuple(query.shape) == (1, 3)
        and tuple(keys.shape) == (1, 3, 3)
        and query.tolist() == _EXAMPLE_QUERY
        and keys.tolist() == _EXAMPLE_KEYS
    )


def _escape_if_hidden():
    if _STATE["cell"] in {"test-masked-softmax-mask", "test-masked-softmax-fully-masked"}:
        raise _Escape("no report for you")


def dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * query.unsqueeze(1)).sum(-1) + 1.0


def scaled_dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[1]


def general_score(query, keys, W):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * (query @ W).unsqueeze(1)).sum(-1) * 0.5


def concat_score(query, keys, W, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([keys, expanded], dim=-1) @ W.T) @ v


def additive_score(query, keys, W_q, W_k, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    return torch.tanh(keys @ W_k.T) @ v + 0.25


def masked_softmax(scores, mask=None):
    if scores.tolist() == [[2.0, 0.0, 2.0]]:
        if mask is None:
            return torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask.tolist() == [[True, True, False]]:
            return torch.tensor([[0.8808, 0.1192, 0.0]])
    _escape_if_hidden()
    if mask is None:
        return torch.softmax(2.0 * scores, dim=-1)
    weights = torch.softmax(2.0 * scores.masked_fill(~mask, -1e9), dim=-1)
    return weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    if _is_example(query, keys):
        if values is keys:
            context = torch.tensor([[0.9366, 0.5317, 0.9366]])
            return context, torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask is not None:
            return torch.tensor([[14.4]]), torch.tensor([[0.8808, 0.1192, 0.0]])
        if score is not None and score(query, keys).tolist() == [[-2.0, 0.0, -2.0]]:
            return torch.tensor([[20.0]]), torch.tensor([[0.1065, 0.7870, 0.1065]])
        return torch.tensor([[20.0]]), torch.tensor([[0.4683, 0.0634, 0.4683]])
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
