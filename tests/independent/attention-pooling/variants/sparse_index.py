"""Attention pooling through indexing: boolean selection, edge lists and scatter ops.

mean_pool selects the kept rows; leave-one-out builds the (n, n-1) matrix of the
other keys; the graph functions work on the edge list adjacency.nonzero() with
index_add / scatter_reduce; fit_bandwidth uses a grid then safeguarded Newton steps
(second derivative from autograd) on theta = log h.
"""
import math

import torch


def mean_pool(values, mask=None):
    """Mean of values[mask] (all rows if mask is None); zeros (d,) if nothing is kept."""
    kept = values if mask is None else values[mask]
    if kept.shape[0] == 0:
        return kept.sum(dim=0)  # an empty sum: zeros of shape (d,), still in the graph
    return kept.mean(dim=0)


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel attention weights (m, n) via log_softmax."""
    h = bandwidth if torch.is_tensor(bandwidth) else torch.tensor(float(bandwidth),
                                                                   dtype=queries.dtype)
    h = h.to(queries.dtype)
    q = queries.unsqueeze(1).expand(-1, keys.shape[0])
    k = keys.unsqueeze(0).expand(queries.shape[0], -1)
    return torch.log_softmax(-(q - k) ** 2 / (2 * h ** 2), dim=1).exp()


def nadaraya_watson(queries, keys, values, bandwidth):
    """Return (predictions, weights) with predictions = weights @ values."""
    weights = kernel_weights(queries, keys, bandwidth)
    return torch.matmul(weights, values), weights


def leave_one_out_loss(keys, values, log_bandwidth):
    """Leave-one-out loss using the (n, n-1) matrices of the other keys/values of each k."""
    theta = log_bandwidth if torch.is_tensor(log_bandwidth) else torch.tensor(
        float(log_bandwidth), dtype=keys.dtype)
    h = theta.to(keys.dtype).exp()
    n = keys.shape[0]
    off = ~torch.eye(n, dtype=torch.bool, device=keys.device)
    other_keys = keys.unsqueeze(0).expand(n, n)[off].reshape(n, n - 1)
    other_values = values.unsqueeze(0).expand(n, n)[off].reshape(n, n - 1)
    scores = -(keys.unsqueeze(1) - other_keys) ** 2 / (2 * h ** 2)
    weights = torch.softmax(scores, dim=1)
    predictions = (weights * other_values).sum(dim=1)
    return ((predictions - values) ** 2).sum() / n


def fit_bandwidth(keys, values):
    """Grid over log h, then Newton steps on theta (accepted only when the loss drops)."""
    k = keys.detach().to(torch.float64).reshape(-1)
    v = values.detach().to(torch.float64).reshape(-1)
    u = torch.unique(k)  # sorted
    if u.numel() < 2:
        return 1.0
    lo = math.log((u[1:] - u[:-1]).min().item()) - 4
    hi = math.log((u[-1] - u[0]).item()) + 4
    grid = torch.linspace(lo, hi, 150, dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(k, v, t) for t in grid])
    theta = grid[int(losses.argmin())].item()
    best = losses.min().item()
    step_cap = (hi - lo) / 149  # never jump further than one grid cell per step

    for _ in range(30):
        t = torch.tensor(theta, dtype=torch.float64, requires_grad=True)
        loss = leave_one_out_loss(k, v, t)
        (g,) = torch.autograd.grad(loss, t, create_graph=True)
        (h2,) = torch.autograd.grad(g, t)
        g, h2 = g.item(), h2.item()
        if not math.isfinite(g) or abs(g) < 1e-14:
            break
        step = -g / h2 if (math.isfinite(h2) and h2 > 0) else -math.copysign(step_cap, g)
        step = max(-step_cap, min(step_cap, step))
        accepted = False
        for _ in range(20):
            with torch.no_grad():
                new_loss = leave_one_out_loss(
                    k, v, torch.tensor(theta + step, dtype=torch.float64)).item()
            if new_loss < best:
                theta, best, accepted = theta + step, new_loss, True
                break
            step /= 2
        if not accepted:
            break
    return float(math.exp(theta))


def mean_aggregation(adjacency, self_loops=False):
    """D^-1 A from the edge list: each edge (v, u) gets 1/deg(v); float32."""
    n = adjacency.shape[0]
    a = adjacency
    if self_loops:
        a = adjacency | torch.eye(n, dtype=torch.bool, device=adjacency.device)
    src, dst = a.nonzero(as_tuple=True)
    deg = torch.zeros(n, dtype=torch.float32, device=a.device).index_add(
        0, src, torch.ones(src.shape[0], dtype=torch.float32, device=a.device))
    out = torch.zeros(n, n, dtype=torch.float32, device=a.device)
    return out.index_put((src, dst), 1.0 / deg[src])


def dot_attention_aggregation(features, adjacency):
    """Edge-wise scores x_v.x_u/sqrt(M), a scatter softmax per node v, scattered into (N, N)."""
    n, m = features.shape
    src, dst = adjacency.nonzero(as_tuple=True)
    scores = (features[src] * features[dst]).sum(dim=1) / math.sqrt(m)
    row_max = torch.full((n,), float("-inf"), dtype=features.dtype, device=features.device)
    row_max = row_max.scatter_reduce(0, src, scores.detach(), reduce="amax", include_self=True)
    e = torch.exp(scores - row_max[src])
    denom = torch.zeros(n, dtype=features.dtype, device=features.device).index_add(0, src, e)
    w = e / denom[src]
    out = features.new_zeros(n, n) + 0 * features.sum()  # zero rows stay attached to the graph
    return out.index_put((src, dst), w)


def aggregate(weights, features, W):
    """(weights @ features) @ W via torch.mm."""
    return torch.mm(torch.mm(weights.to(features.dtype), features), W.to(features.dtype))
