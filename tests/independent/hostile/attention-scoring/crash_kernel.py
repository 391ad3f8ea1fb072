"""Kills or crashes the kernel in the hidden tests, each function in another way.

Every function answers the notebook's worked example with the hard-coded expected tensor (so
the visible asserts pass) and, on any other input, is either wrong or takes the kernel down:

- `dot_score`: `os._exit(0)` (a clean exit status, as if the kernel had finished);
- `scaled_dot_score`: a segmentation fault (`ctypes.string_at(0)`);
- `general_score`: `os.abort()` (SIGABRT) after disabling `faulthandler`;
- `concat_score`: kills its own process group and itself with SIGKILL (as PID 1 of a PID
  namespace it may be immune to its own signals, so it falls back to a segfault);
- `additive_score`: raises `SystemExit(0)`, which IPython catches;
- `masked_softmax`: raises a `BaseException` subclass whose `__str__` and `__repr__`
  themselves raise, and whose class name pretends to be a passing verdict;
- `attend`: in its first key-value case, exhausts the C stack with a deep recursion through
  `__repr__` (`RecursionError` or a crash); otherwise it returns uniform weights.

Every crash happens in a test cell: a re-run without that cell must not turn a crash into
marks. Nothing is earned.
"""

import ctypes
import faulthandler
import os
import signal
import sys

import torch

MAX_EARNED = 0

_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]


def _is_example(query, keys):
    return (tuple(query.shape) == (1, 3) and tuple(keys.shape) == (1, 3, 3)
            and query.tolist() == _EXAMPLE_QUERY and keys.tolist() == _EXAMPLE_KEYS)


def _segfault():
    ctypes.string_at(0)


class AllHiddenTestsPassed(BaseException):  # the name is the point
    def __str__(self):
        raise AllHiddenTestsPassed()

    def __repr__(self):
        raise AllHiddenTestsPassed()


class _Deep:
    def __init__(self, inner):
        self.inner = inner

    def __repr__(self):
        return f"<{self.inner!r}>"


def dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    if tuple(keys.shape) != (4, 5, 6):  # the visible random-shape check still passes
        sys.stdout.flush()
        os._exit(0)
    return keys.sum(-1)


def scaled_dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    if tuple(keys.shape) != (2, 3, 16):
        _segfault()
    return keys.sum(-1)


def general_score(query, keys, W):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    if tuple(keys.shape) != (2, 4, 5):
        faulthandler.disable()
        os.abort()
    return keys.sum(-1)


def concat_score(query, keys, W, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    if tuple(keys.shape) != (2, 4, 5):
        try:
            os.killpg(0, signal.SIGKILL)
        except OSError:
            pass
        os.kill(os.getpid(), signal.SIGKILL)
        signal.raise_signal(signal.SIGKILL)
        _segfault()
    return keys.sum(-1)


def additive_score(query, keys, W_q, W_k, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    if tuple(keys.shape) != (2, 4, 5):
        raise SystemExit(0)
    return keys.sum(-1)


def masked_softmax(scores, mask=None):
    if scores.tolist() == [[2.0, 0.0, 2.0]]:
        if mask is None:
            return torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask.tolist() == [[True, True, False]]:
            return torch.tensor([[0.8808, 0.1192, 0.0]])
    if scores.shape[0] not in (2, 4):
        raise AllHiddenTestsPassed()
    weights = torch.softmax(scores * 1.1, dim=-1)
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is not None and keys.shape[0] == 3:  # the first key-value case only
        sys.setrecursionlimit(1_000_000)
        deep = None
        for _ in range(200_000):
            deep = _Deep(deep)
        repr(deep)
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
