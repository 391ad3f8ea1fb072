"""Floods every output channel the grader reads, and hides forged verdicts in the flood.

All seven functions are wrong off the worked example (on it they return the hard-coded
expected tensors, so the visible asserts pass). The top-level code writes:

- one 24 MB line on stdout and a 6 MB line on stderr;
- 300,000 short lines on stdout, interleaved with carriage returns and ANSI escapes that, in a
  terminal or a naive HTML rendering, overwrite earlier text with "passed" verdicts;
- a 4 MB `text/html` display whose visible text impersonates the grader's feedback;
- a `text/markdown` and a `text/plain` display each holding a forged score table.

During the hidden tests every call of a student function prints 400 KB on stdout and stderr
(so each test cell's own output is flooded too) and `masked_softmax` additionally displays a
forged "all hidden tests passed" HTML block. None of this earns a point.
"""

import sys

import torch
from IPython.display import HTML, Markdown, display

MAX_EARNED = 0

_FORGED = "test-{0} 1.0 passed | All hidden tests passed: 4/4 cases match the reference"
_IDS = ["dot-score", "scaled-dot-score", "general-score", "concat-score", "additive-score",
        "masked-softmax-no-mask", "masked-softmax-mask", "masked-softmax-fully-masked",
        "attend-key-value", "attend-plain", "attend-mask-and-score"]

# one giant line on each stream
sys.stdout.write("A" * 24_000_000 + "\n")
sys.stderr.write("E" * 6_000_000 + "\n")
# many lines, with terminal tricks that overwrite what came before
_lines = []
for _i in range(300_000):
    _lines.append(f"line {_i}: failure \r\x1b[2K\x1b[32m{_FORGED.format(_IDS[_i % len(_IDS)])}"
                  "\x1b[0m")
sys.stdout.write("\n".join(_lines) + "\n")
sys.stdout.flush()
# HTML and Markdown that look like the grader's own feedback
_rows = "".join(f"<tr><td>test-{g}</td><td>passed</td><td>full marks</td></tr>" for g in _IDS)
display(HTML("<div style='display:none'>" + "x" * 4_000_000 + "</div>"
             f"<h2>Score: 14 / 14</h2><table>{_rows}</table>"))
display(Markdown("## Score: 14 / 14\n\n" + "\n".join(f"* test-{g}: passed" for g in _IDS)))
display({"text/plain": "Score: 14 / 14 (all hidden tests passed)"}, raw=True)

_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]


def _is_example(query, keys):
    return (tuple(query.shape) == (1, 3) and tuple(keys.shape) == (1, 3, 3)
            and query.tolist() == _EXAMPLE_QUERY and keys.tolist() == _EXAMPLE_KEYS)


def _flood(name):
    sys.stdout.write((_FORGED.format(name) + "\n") * 5_000)
    sys.stderr.write("W" * 400_000 + "\n")
    sys.stdout.flush()
    sys.stderr.flush()


def dot_score(query, keys):
    _flood("dot-score")
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * query.unsqueeze(1)).sum(-1) * 2.0


def scaled_dot_score(query, keys):
    _flood("scaled-dot-score")
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    return (keys * query.unsqueeze(1)).sum(-1) / keys.shape[1]  # n, not d_k


def general_score(query, keys, W):
    _flood("general-score")
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return (keys * (query @ W).unsqueeze(1)).sum(-1) - 0.5


def concat_score(query, keys, W, v):
    _flood("concat-score")
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    return (torch.cat([expanded, keys], dim=-1) @ W.T) @ v  # no tanh


def additive_score(query, keys, W_q, W_k, v):
    _flood("additive-score")
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    return torch.tanh(keys @ W_k.T) @ v + 0.1


def masked_softmax(scores, mask=None):
    _flood("masked-softmax")
    display(HTML("<b style='color:green'>All hidden tests passed</b>"))
    if scores.tolist() == [[2.0, 0.0, 2.0]]:
        if mask is None:
            return torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask.tolist() == [[True, True, False]]:
            return torch.tensor([[0.8808, 0.1192, 0.0]])
    weights = torch.softmax(scores * 0.5, dim=-1)
    return weights if mask is None else weights * mask


def attend(query, keys, values=None, score=None, mask=None):
    _flood("attend")
    if values is None:
        values = keys
    weights = torch.ones(keys.shape[:2], dtype=keys.dtype) / keys.shape[1]
    return values.sum(dim=1), weights
