"""Attention pooling written with explicit Python loops over rows, queries and nodes.

Leave-one-out loops over k and drops key k with torch.cat; fit_bandwidth is a
hand-written gradient descent (with backtracking) on theta = log h from the best
point of a coarse grid.
"""
import math

import torch


def _bandwidth(bandwidth, like):
    """0-dim tensor of like's dtype holding h (graph kept for tensors)."""
    if isinstance(bandwidth, torch.Tensor):
        return bandwidth.to(like.dtype)
    return torch.tensor(float(bandwidth), dtype=like.dtype)


def _stable_softmax(scores):
    """Softmax of a 1-D tensor of finite scores, subtracting the max first."""
    shifted = scores - scores.max()
    e = torch.exp(shifted)
    return e / e.sum()


def mean_pool(values, mask=None):
    """Average of the kept rows of values (n, d), accumulated row by row; zeros if none kept."""
    total = values[0] * 0  # zeros of the right shape/dtype, still part of the graph
    count = 0
    for i in range(values.shape[0]):
        if mask is None or bool(mask[i]):
            total = total + values[i]
            count += 1
    if count == 0:
        return total
    return total / count


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights (m, n), one softmax over keys per query."""
    h = _bandwidth(bandwidth, queries)
    rows = []
    for j in range(queries.shape[0]):
        scores = -((queries[j] - keys) ** 2) / (2 * h ** 2)
        rows.append(_stable_softmax(scores))
    return torch.stack(rows, dim=0)


def nadaraya_watson(queries, keys, values, bandwidth):
    """Predictions (m,) = weights @ values and the weights (m, n)."""
    weights = kernel_weights(queries, keys, bandwidth)
    predictions = torch.stack([(weights[j] * values).sum() for j in range(weights.shape[0])])
    return predictions, weights


def leave_one_out_loss(keys, values, log_bandwidth):
    """(1/n) sum_k (f_{-k}(k_k) - v_k)^2, looping over the left-out key k."""
    h = torch.exp(_bandwidth(log_bandwidth, keys))
    n = keys.shape[0]
    total = keys.new_zeros(())
    for k in range(n):
        other_keys = torch.cat([keys[:k], keys[k + 1:]])
        other_values = torch.cat([values[:k], values[k + 1:]])
        w = _stable_softmax(-((keys[k] - other_keys) ** 2) / (2 * h ** 2))
        total = total + ((w * other_values).sum() - values[k]) ** 2
    return total / n


def _loo_fast(keys, values, theta):
    """Vectorised leave-one-out loss used inside fit_bandwidth (same value, faster)."""
    h = torch.exp(theta)
    n = keys.shape[0]
    scores = -((keys[:, None] - keys[None, :]) ** 2) / (2 * h ** 2)
    scores = scores - torch.diag(torch.full((n,), float("inf"), dtype=keys.dtype))
    scores = scores - scores.max(dim=1, keepdim=True).values
    e = torch.exp(scores)
    w = e / e.sum(dim=1, keepdim=True)
    return ((w @ values - values) ** 2).mean()


def fit_bandwidth(keys, values):
    """Best h: coarse grid over log h, then gradient descent with backtracking on theta."""
    k = keys.detach().double().flatten()
    v = values.detach().double().flatten()
    s = sorted(k.tolist())
    gaps = [b - a for a, b in zip(s[:-1], s[1:], strict=True) if b - a > 0]
    if not gaps:
        return 1.0
    lo, hi = math.log(min(gaps)) - 4.0, math.log(s[-1] - s[0]) + 4.0
    steps = 100
    best_theta, best_loss = None, float("inf")
    with torch.no_grad():
        for i in range(steps + 1):
            t = lo + (hi - lo) * i / steps
            loss = _loo_fast(k, v, torch.tensor(t, dtype=torch.float64)).item()
            if loss < best_loss:
                best_theta, best_loss = t, loss

    theta = best_theta
    step = 0.1
    for _ in range(100):
        t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        loss = _loo_fast(k, v, t)
        (grad,) = torch.autograd.grad(loss, t)
        g = grad.item()
        if g == 0.0 or not math.isfinite(g):
            break
        # normalised gradient step of length `step`, halved until the loss decreases
        improved = False
        while step > 1e-6:
            candidate = theta - math.copysign(step, g)
            with torch.no_grad():
                c_loss = _loo_fast(k, v, torch.tensor(candidate, dtype=torch.float64)).item()
            if c_loss < loss.item():
                theta, improved = candidate, True
                break
            step /= 2
        if not improved:
            break
        step = min(2 * step, 1.0)
        if c_loss < best_loss:
            best_theta, best_loss = theta, c_loss
    return math.exp(best_theta)


def mean_aggregation(adjacency, self_loops=False):
    """D^-1 A (or D^-1 (A + I)) built node by node, float32; zero row for an isolated node."""
    n = adjacency.shape[0]
    out = torch.zeros(n, n, dtype=torch.float32)
    for v in range(n):
        neighbours = [u for u in range(n) if bool(adjacency[v, u]) or (self_loops and u == v)]
        for u in neighbours:
            out[v, u] = 1.0 / len(neighbours)
    return out


def dot_attention_aggregation(features, adjacency):
    """Row v = softmax over neighbours u of x_v.x_u / sqrt(M), built row by row."""
    n, m = features.shape
    rows = []
    for v in range(n):
        idx = [u for u in range(n) if bool(adjacency[v, u])]
        row = features.new_zeros(n) + 0 * features[v].sum()  # zeros, attached to the graph
        if idx:
            idx_t = torch.tensor(idx, dtype=torch.long)
            scores = (features[idx_t] @ features[v]) / math.sqrt(m)
            w = _stable_softmax(scores)
            row = row.index_add(0, idx_t, w)
        rows.append(row)
    return torch.stack(rows)


def aggregate(weights, features, W):
    """weights @ features @ W computed node by node."""
    weights = weights.to(features.dtype)
    W = W.to(features.dtype)
    out = []
    for v in range(weights.shape[0]):
        message = (weights[v].unsqueeze(1) * features).sum(dim=0)
        out.append(message @ W)
    return torch.stack(out)
