"""Explicit Python loops over rows, queries, keys and nodes, assembled with torch.stack.

Every entry is a 0-dim tensor of the inputs' dtype: stacking (rather than writing into a
torch.zeros buffer) keeps the dtype and the gradients. Each softmax subtracts its largest
score first. leave_one_out_loss loops over the left-out observation only, with a tensor of
the other keys: a loop over all n^2 pairs makes each loss cost a tenth of a second for
n = 100, and fit_bandwidth, which evaluates it a few hundred times, too slow for a test cell.
"""

import math

import torch


def _softmax(scores):
    top = torch.stack(scores).max().detach()
    exps = [torch.exp(s - top) for s in scores]
    total = exps[0]
    for e in exps[1:]:
        total = total + e
    return [e / total for e in exps]


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    n = values.shape[0]
    kept = [i for i in range(n) if mask is None or bool(mask[i])]
    if not kept:
        return values[0] * 0.0
    total = values[kept[0]]
    for i in kept[1:]:
        total = total + values[i]
    return total / len(kept)


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    rows = []
    for j in range(queries.shape[0]):
        scores = [-((queries[j] - keys[i]) / bandwidth) ** 2 / 2 for i in range(keys.shape[0])]
        rows.append(torch.stack(_softmax(scores)))
    return torch.stack(rows)


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    predictions = []
    for j in range(weights.shape[0]):
        total = weights[j, 0] * values[0]
        for i in range(1, values.shape[0]):
            total = total + weights[j, i] * values[i]
        predictions.append(total)
    return torch.stack(predictions), weights


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    n = keys.shape[0]
    h = log_bandwidth.exp()
    errors = []
    for k in range(n):
        others = torch.tensor([i for i in range(n) if i != k])
        scores = -(keys[k] - keys[others]) ** 2 / (2 * h * h)          # (n - 1,)
        weights = torch.exp(scores - scores.max().detach())
        prediction = (weights * values[others]).sum() / weights.sum()
        errors.append((prediction - values[k]) ** 2)
    return torch.stack(errors).mean()


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = float(keys.max() - keys.min())
    if spread == 0:
        return 1.0
    best_theta, best_loss = 0.0, math.inf
    for step in range(131):                     # log h from log(spread) - 10 to + 3
        theta = math.log(spread) - 10 + 0.1 * step
        with torch.no_grad():
            loss = float(leave_one_out_loss(keys, values, torch.tensor(theta,
                                                                       dtype=torch.float64)))
        if loss < best_loss:
            best_theta, best_loss = theta, loss
    theta = torch.tensor(best_theta, dtype=torch.float64, requires_grad=True)
    lr = 0.05
    for _ in range(40):                         # a few careful gradient steps
        loss = leave_one_out_loss(keys, values, theta)
        (grad,) = torch.autograd.grad(loss, theta)
        trial = theta.item() - lr * grad.item() / (abs(grad.item()) + 1e-12)
        with torch.no_grad():
            trial_loss = float(leave_one_out_loss(keys, values,
                                                  torch.tensor(trial, dtype=torch.float64)))
        if trial_loss < loss.item():
            theta = torch.tensor(trial, dtype=torch.float64, requires_grad=True)
        else:
            lr /= 2
    return math.exp(theta.item())


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    N = adjacency.shape[0]
    rows = []
    for v in range(N):
        linked = [u for u in range(N) if bool(adjacency[v, u]) or (self_loops and u == v)]
        rows.append([1.0 / len(linked) if u in linked else 0.0 for u in range(N)])
    return torch.tensor(rows, dtype=torch.float32)


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    N, M = features.shape
    rows = []
    for v in range(N):
        row = [features.new_zeros(()) for _ in range(N)]
        neighbours = [u for u in range(N) if bool(adjacency[v, u])]
        if neighbours:
            scores = [(features[v] * features[u]).sum() / math.sqrt(M) for u in neighbours]
            for u, a in zip(neighbours, _softmax(scores), strict=True):
                row[u] = a
        rows.append(torch.stack(row))
    return torch.stack(rows)


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    N = features.shape[0]
    rows = []
    for v in range(N):
        mixed = sum(weights[v, u].to(features.dtype) * features[u] for u in range(N))
        rows.append(mixed @ W)
    return torch.stack(rows)
