"""Wrong answers made of IEEE special values, which naive comparisons let through.

No forging and no patching: each function returns a plain `torch.Tensor` of the right shape
and dtype, connected to its inputs for gradients, but its values are NaN or infinite where it
matters (any comparison `a > tol`, `a == b` or `abs(a - b) > tol` with a NaN is false, so a
judge that looks for *failures* finds none):

- `dot_score`: all NaN, with NaN gradients;
- `scaled_dot_score`: +inf scores (inf - inf is NaN in a difference);
- `general_score`: the right scores except one NaN entry per row (a judge that ignores NaN
  positions sees a match);
- `concat_score`: NaN where the right score is positive, the right value elsewhere;
- `additive_score`: the right scores plus `0 * inf` (NaN) gradients;
- `masked_softmax`: NaN on masked positions and on fully masked rows (where the answer is
  zero), the plain softmax elsewhere;
- `attend`: NaN context, and weights from the stand-in or NaN.

On the notebook's worked example each function returns the hard-coded expected tensor, so the
visible asserts pass. Every hidden case is wrong, so nothing is earned.
"""

import torch

MAX_EARNED = 0

_EXAMPLE_QUERY = [[1.0, 0.0, 1.0]]
_EXAMPLE_KEYS = [[[1.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 1.0, 1.0]]]
_NAN = float("nan")
_INF = float("inf")


def _is_example(query, keys):
    return (tuple(query.shape) == (1, 3) and tuple(keys.shape) == (1, 3, 3)
            and query.tolist() == _EXAMPLE_QUERY and keys.tolist() == _EXAMPLE_KEYS)


def _dot(query, keys):
    return (keys * query.unsqueeze(1)).sum(-1)


def dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    return _dot(query, keys) * _NAN


def scaled_dot_score(query, keys):
    if _is_example(query, keys):
        return torch.tensor([[1.1547, 0.0, 1.1547]])
    return _dot(query, keys) * 0.0 + _INF


def general_score(query, keys, W):
    if _is_example(query, keys):
        return torch.tensor([[2.0, 0.0, 2.0]])
    right = (keys * (query @ W).unsqueeze(1)).sum(-1)
    hole = torch.zeros_like(right)
    hole[:, 0] = _NAN
    return right + hole


def concat_score(query, keys, W, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    expanded = query.unsqueeze(1).expand(-1, keys.shape[1], -1)
    right = torch.tanh(torch.cat([expanded, keys], dim=-1) @ W.T) @ v
    return torch.where(right > 0, right * _NAN, right)


class _NanGradient(torch.autograd.Function):
    """The identity forward; NaN backward."""

    @staticmethod
    def forward(ctx, x):
        return x.clone()

    @staticmethod
    def backward(ctx, grad):
        return grad * _NAN


def additive_score(query, keys, W_q, W_k, v):
    if _is_example(query, keys):
        return torch.tanh(torch.tensor([[2.0, 1.0, 3.0]]))
    right = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T) @ v
    return _NanGradient.apply(right)


def masked_softmax(scores, mask=None):
    if scores.tolist() == [[2.0, 0.0, 2.0]]:
        if mask is None:
            return torch.tensor([[0.4683, 0.0634, 0.4683]])
        if mask.tolist() == [[True, True, False]]:
            return torch.tensor([[0.8808, 0.1192, 0.0]])
    if mask is None:
        if tuple(scores.shape) == (4, 6):  # the visible "rows sum to 1" check
            return torch.softmax(scores, dim=-1)
        return torch.softmax(scores, dim=-1) + scores[:, :1] * _NAN
    weights = torch.softmax(scores.masked_fill(~mask, -_INF), dim=-1)
    if tuple(mask.shape) in ((2, 4), (2, 2)):  # the visible checks want exact zeros
        return torch.nan_to_num(weights, nan=0.0)
    return torch.where(mask, weights, torch.full_like(weights, _NAN))


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
    if values is None:
        values = keys
    scores = score(query, keys) if score is not None else _dot(query, keys)
    weights = masked_softmax(scores, mask)
    context = (weights.unsqueeze(1) @ values).squeeze(1) * _NAN
    return context, weights
