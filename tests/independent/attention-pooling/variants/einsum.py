"""Attention pooling with broadcasting, einsum and torch.logsumexp.

Weights are exp(scores - logsumexp(scores)); masks are applied with torch.where;
fit_bandwidth refines the best grid point with torch.optim.LBFGS.
"""
import math

import torch


def mean_pool(values, mask=None):
    """Average of the rows of values (n, d) kept by mask (all if None); zeros if none kept."""
    n = values.shape[0]
    if mask is None:
        mask = torch.ones(n, dtype=torch.bool, device=values.device)
    w = mask.to(values.dtype)
    total = w.sum()
    w = torch.where(total > 0, w / torch.where(total > 0, total, torch.ones_like(total)), w)
    return torch.einsum("n,nd->d", w, values)


def _log_softmax_rows(scores):
    """Row-wise log-softmax through torch.logsumexp."""
    return scores - torch.logsumexp(scores, dim=-1, keepdim=True)


def kernel_weights(queries, keys, bandwidth):
    """(m, n) Gaussian kernel weights, rows summing to 1 for any h > 0."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    sq = (queries[:, None] - keys[None, :]) ** 2
    return torch.exp(_log_softmax_rows(-sq / (2.0 * h.square())))


def nadaraya_watson(queries, keys, values, bandwidth):
    """Return (predictions (m,), weights (m, n)) of Nadaraya-Watson regression."""
    w = kernel_weights(queries, keys, bandwidth)
    return torch.einsum("mn,n->m", w, values), w


def leave_one_out_loss(keys, values, log_bandwidth):
    """Leave-one-out mean squared error; the diagonal is removed with torch.where(-inf)."""
    h = torch.exp(torch.as_tensor(log_bandwidth, dtype=keys.dtype))
    n = keys.shape[0]
    sq = (keys[:, None] - keys[None, :]) ** 2
    scores = -sq / (2.0 * h.square())
    off_diagonal = ~torch.eye(n, dtype=torch.bool, device=keys.device)
    scores = torch.where(off_diagonal, scores, torch.full_like(scores, float("-inf")))
    w = torch.exp(_log_softmax_rows(scores))
    residual = torch.einsum("kn,n->k", w, values) - values
    return torch.einsum("k,k->", residual, residual) / n


def fit_bandwidth(keys, values):
    """argmin_h of leave_one_out_loss: log-spaced grid, then LBFGS on theta = log h."""
    k = keys.detach().to(torch.float64).flatten()
    v = values.detach().to(torch.float64).flatten()
    d = (k[:, None] - k[None, :]).abs()
    positive = d[d > 0]
    if positive.numel() == 0:
        return 1.0
    lo = math.log(positive.min().item()) - 4.0
    hi = math.log(positive.max().item()) + 4.0
    grid = torch.linspace(lo, hi, 121, dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(k, v, t) for t in grid])
    i = int(losses.argmin())
    best = [grid[i].item(), losses[i].item()]

    theta = torch.tensor(best[0], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([theta], lr=1.0, max_iter=50, line_search_fn="strong_wolfe")

    def closure():
        """LBFGS closure: loss and gradient at the current theta, remembering the best."""
        opt.zero_grad()
        loss = leave_one_out_loss(k, v, theta)
        if torch.isfinite(loss) and loss.item() < best[1]:
            best[0], best[1] = theta.item(), loss.item()
        loss.backward()
        return loss

    try:
        opt.step(closure)
    except RuntimeError:
        pass
    return float(math.exp(best[0]))


def mean_aggregation(adjacency, self_loops=False):
    """float32 D^-1 A (D^-1 (A + I) with self_loops) via where; isolated nodes get zero rows."""
    n = adjacency.shape[0]
    a = adjacency
    if self_loops:
        a = a | torch.eye(n, dtype=torch.bool, device=adjacency.device)
    a = a.float()
    deg = torch.einsum("ij->i", a)
    inv = torch.where(deg > 0, 1.0 / torch.where(deg > 0, deg, torch.ones_like(deg)),
                      torch.zeros_like(deg))
    return torch.einsum("i,ij->ij", inv, a)


def dot_attention_aggregation(features, adjacency):
    """Neighbour-restricted softmax of x_v.x_u/sqrt(M), using torch.where for the mask."""
    m = features.shape[-1]
    scores = torch.einsum("vm,um->vu", features, features) / math.sqrt(m)
    neg_inf = torch.full_like(scores, float("-inf"))
    masked = torch.where(adjacency, scores, neg_inf)
    isolated = ~adjacency.any(dim=-1, keepdim=True)
    # an isolated row would be all -inf: give it zeros instead so logsumexp stays finite
    masked = torch.where(isolated, torch.zeros_like(scores), masked)
    w = torch.exp(_log_softmax_rows(masked))
    return torch.where(adjacency, w, torch.zeros_like(w))


def aggregate(weights, features, W):
    """einsum of weights (N, N), features (N, M) and W (M, K) -> (N, K)."""
    dtype = features.dtype
    return torch.einsum("vu,um,mk->vk", weights.to(dtype), features, W.to(dtype))
