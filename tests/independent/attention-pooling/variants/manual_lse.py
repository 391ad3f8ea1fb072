"""Attention pooling with a hand-written, max-shifted softmax (log-sum-exp trick by hand).

Leave-one-out puts -inf on the diagonal by adding diag(-inf); fit_bandwidth scans a
log-spaced grid and refines the bracket of the best point by golden-section search.
"""
import math

import torch


def _softmax_by_hand(scores, dim=-1):
    """exp(s - max s) / sum exp(s - max s); rows that are entirely -inf give zeros."""
    mx = scores.amax(dim=dim, keepdim=True).detach()
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    e = torch.exp(scores - mx)
    denom = e.sum(dim=dim, keepdim=True)
    denom = torch.where(denom > 0, denom, torch.ones_like(denom))
    return e / denom


def mean_pool(values, mask=None):
    """Masked mean of the rows of values (n, d); zeros when the mask keeps nothing."""
    if mask is None:
        return values.sum(dim=0) / values.shape[0]
    kept = values.masked_fill(~mask.unsqueeze(-1), 0.0)
    count = int(mask.sum())
    return kept.sum(dim=0) / max(count, 1)


def kernel_weights(queries, keys, bandwidth):
    """softmax_i(-(q_j - k_i)^2 / (2 h^2)) computed with the max subtracted by hand."""
    if not torch.is_tensor(bandwidth):
        bandwidth = torch.tensor(bandwidth, dtype=queries.dtype)
    h2 = bandwidth.to(queries.dtype) ** 2
    scores = -((queries.reshape(-1, 1) - keys.reshape(1, -1)) ** 2) / (2 * h2)
    return _softmax_by_hand(scores, dim=1)


def nadaraya_watson(queries, keys, values, bandwidth):
    """Nadaraya-Watson predictions and the kernel weights used for them."""
    weights = kernel_weights(queries, keys, bandwidth)
    return torch.mv(weights, values), weights


def leave_one_out_loss(keys, values, log_bandwidth):
    """Leave-one-out squared error averaged over k, diagonal scores set to -inf."""
    if not torch.is_tensor(log_bandwidth):
        log_bandwidth = torch.tensor(log_bandwidth, dtype=keys.dtype)
    h2 = torch.exp(2 * log_bandwidth.to(keys.dtype))
    n = keys.shape[0]
    scores = -((keys.reshape(-1, 1) - keys.reshape(1, -1)) ** 2) / (2 * h2)
    minus_inf_diag = torch.diag(torch.full((n,), float("-inf"), dtype=keys.dtype))
    # off the diagonal this adds 0.0, on it -inf: f_{-k} never sees key k
    scores = scores + minus_inf_diag
    weights = _softmax_by_hand(scores, dim=1)
    errors = torch.mv(weights, values) - values
    return (errors * errors).sum() / n


def fit_bandwidth(keys, values):
    """Minimise the leave-one-out loss over theta = log h: grid scan, then golden section."""
    k = keys.detach().to(torch.float64).flatten()
    v = values.detach().to(torch.float64).flatten()
    spread = (k.max() - k.min()).item()
    if spread <= 0:
        return 1.0
    uniq = torch.unique(k)
    min_gap = (uniq[1:] - uniq[:-1]).min().item()

    def loss_at(theta):
        """Leave-one-out loss at a Python-float theta, without autograd."""
        with torch.no_grad():
            return leave_one_out_loss(k, v, torch.tensor(theta, dtype=torch.float64)).item()

    lo, hi = math.log(min_gap) - 5.0, math.log(spread) + 5.0
    count = 120
    thetas = [lo + (hi - lo) * i / (count - 1) for i in range(count)]
    losses = [loss_at(t) for t in thetas]
    i = min(range(count), key=lambda j: losses[j])
    best_t, best_l = thetas[i], losses[i]

    a = thetas[max(i - 1, 0)]
    b = thetas[min(i + 1, count - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    c, d = b - ratio * (b - a), a + ratio * (b - a)
    fc, fd = loss_at(c), loss_at(d)
    for _ in range(40):
        if fc < fd:
            b, d, fd = d, c, fc
            c = b - ratio * (b - a)
            fc = loss_at(c)
        else:
            a, c, fc = c, d, fd
            d = a + ratio * (b - a)
            fd = loss_at(d)
        for t, value in ((c, fc), (d, fd)):
            if value < best_l:
                best_t, best_l = t, value
    return math.exp(best_t)


def mean_aggregation(adjacency, self_loops=False):
    """Row-normalised adjacency (optionally with self-loops) as float32."""
    a = adjacency.clone()
    if self_loops:
        a.fill_diagonal_(True)
    a = a.to(torch.float32)
    deg = a.sum(dim=1)
    deg[deg == 0] = 1.0  # isolated node: its zero row stays zero
    return a / deg.unsqueeze(1)


def dot_attention_aggregation(features, adjacency):
    """Scaled dot-product scores, -inf outside N(v), softmax by hand; zero rows if isolated."""
    scores = (features @ features.transpose(0, 1)) / math.sqrt(features.shape[1])
    scores = scores.masked_fill(~adjacency, float("-inf"))
    return _softmax_by_hand(scores, dim=1)


def aggregate(weights, features, W):
    """weights @ (features @ W), cast to features' dtype."""
    return weights.to(features.dtype) @ (features @ W.to(features.dtype))
