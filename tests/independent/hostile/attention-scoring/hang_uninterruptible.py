"""Hangs the hidden tests in ways that an interrupt cannot stop.

Every function returns the hard-coded answer on the notebook's worked example (so the visible
asserts pass as far as they go) and is wrong everywhere else. Two of them never return:

- `dot_score` on any other input runs a catastrophically backtracking regular expression: the
  C regex engine holds the GIL and never checks for signals, so neither the kernel's
  `KeyboardInterrupt` nor a Python-level signal handler can run until it finishes (in about
  2**60 steps);
- `scaled_dot_score` ignores SIGINT and SIGTERM, swallows every `BaseException` (an interrupt
  that still gets through) and loops forever, re-arming the ignore after each catch.

The grader must kill the kernel from the outside (and, if it re-runs the notebook without the
hanging cell, meet the second hang in the re-run), and leave nothing running: the hung kernel
is PID 1 of its PID namespace, so killing only its `bwrap` parent orphans it (it then spins
until the kernel's CPU-time limit, 300 s, and the grading command waits for it). `attend`
never calls its `score`, so the hang stays in the two scoring cells. Nothing is earned: all
seven functions are wrong.
"""

import re
import signal
import time

import torch

MAX_EARNED = 0

_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]


def _is_example(query, keys):
    return (tuple(query.shape) == (1, 3) and tuple(keys.shape) == (1, 3, 3)
            and query.tolist() == _EXAMPLE_QUERY and keys.tolist() == _EXAMPLE_KEYS)


def _ignore_signals():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        try:
            signal.signal(sig, signal.SIG_IGN)
        except (OSError, ValueError):
            pass


_ignore_signals()


def dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    # exponential backtracking inside one C call: no bytecode boundary, no signal check
    re.match(r"^(a+)+$", "a" * 64 + "b")
    return keys.sum(-1)


def scaled_dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    while True:
        try:
            _ignore_signals()
            while True:
                time.sleep(0.05)
        except BaseException:  # KeyboardInterrupt, SystemExit: keep hanging
            continue


def general_score(query, keys, W):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * (query @ W).unsqueeze(1)).sum(-1) + 1.0


def concat_score(query, keys, W, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([keys, expanded], dim=-1) @ W.T) @ v  # key first: wrong


def additive_score(query, keys, W_q, W_k, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    return torch.tanh(keys @ W_k.T) @ v  # the query is forgotten


def masked_softmax(scores, mask=None):
    if mask is None:
        return torch.softmax(scores * 1.5, dim=-1)
    return torch.softmax(scores, dim=-1) * mask  # not renormalised


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
