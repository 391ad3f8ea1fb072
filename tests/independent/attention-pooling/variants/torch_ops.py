"""Attention pooling with straightforward high-level torch ops.

softmax/masked_fill(-inf) for the weights, a masked diagonal for leave-one-out,
and fit_bandwidth as a coarse grid on theta = log h refined with torch.optim.Adam.
"""
import math

import torch


def _as_bandwidth(bandwidth, like):
    """Return bandwidth as a 0-dim tensor of like's dtype, keeping its autograd graph."""
    if torch.is_tensor(bandwidth):
        return bandwidth.to(dtype=like.dtype, device=like.device)
    return torch.tensor(float(bandwidth), dtype=like.dtype, device=like.device)


def mean_pool(values, mask=None):
    """Equal-weight average of the rows of values (n, d) that mask keeps; zeros if none."""
    if mask is None:
        return values.mean(dim=0)
    kept = mask.to(values.dtype)
    count = kept.sum()
    return (kept.unsqueeze(1) * values).sum(dim=0) / count.clamp(min=1)


def kernel_weights(queries, keys, bandwidth):
    """Gaussian-kernel attention weights (m, n): row j = softmax_i(-(q_j-k_i)^2 / (2h^2))."""
    h = _as_bandwidth(bandwidth, queries)
    diff = queries.unsqueeze(1) - keys.unsqueeze(0)
    scores = -diff.pow(2) / (2 * h * h)
    return torch.softmax(scores, dim=1)


def nadaraya_watson(queries, keys, values, bandwidth):
    """Nadaraya-Watson regression: returns (weights @ values, weights)."""
    weights = kernel_weights(queries, keys, bandwidth)
    return weights @ values, weights


def leave_one_out_loss(keys, values, log_bandwidth):
    """Mean squared leave-one-out error of Nadaraya-Watson with h = exp(log_bandwidth)."""
    theta = torch.as_tensor(log_bandwidth, dtype=keys.dtype, device=keys.device)
    h = torch.exp(theta)
    n = keys.shape[0]
    diff = keys.unsqueeze(1) - keys.unsqueeze(0)
    scores = -diff.pow(2) / (2 * h * h)
    eye = torch.eye(n, dtype=torch.bool, device=keys.device)
    weights = torch.softmax(scores.masked_fill(eye, float("-inf")), dim=1)
    predictions = weights @ values
    return (predictions - values).pow(2).mean()


def _theta_range(keys):
    """A range of log h wide enough to cover the nearest-neighbour and the constant regime."""
    sorted_keys = torch.sort(keys).values
    gaps = sorted_keys[1:] - sorted_keys[:-1]
    gaps = gaps[gaps > 0]
    if gaps.numel() == 0:
        return None
    lo = math.log(gaps.min().item()) - 4.0
    hi = math.log((sorted_keys[-1] - sorted_keys[0]).item()) + 4.0
    return lo, hi


def fit_bandwidth(keys, values):
    """Return the h > 0 minimising leave_one_out_loss (grid on log h, then Adam)."""
    k = keys.detach().to(torch.float64).reshape(-1)
    v = values.detach().to(torch.float64).reshape(-1)
    bounds = _theta_range(k)
    if bounds is None:  # all keys equal: every h gives the same loss
        return 1.0
    grid = torch.linspace(bounds[0], bounds[1], 161, dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(k, v, t) for t in grid])
    best = int(torch.argmin(losses))
    best_theta, best_loss = grid[best].item(), losses[best].item()

    theta = torch.tensor(best_theta, dtype=torch.float64, requires_grad=True)
    optimizer = torch.optim.Adam([theta], lr=0.05)
    for _ in range(150):
        optimizer.zero_grad()
        loss = leave_one_out_loss(k, v, theta)
        if loss.item() < best_loss:
            best_loss, best_theta = loss.item(), theta.item()
        loss.backward()
        optimizer.step()
    return float(math.exp(best_theta))


def mean_aggregation(adjacency, self_loops=False):
    """Row-stochastic D^-1 A (D^-1 (A + I) with self_loops) as float32; zero rows if isolated."""
    a = adjacency.to(torch.float32)
    if self_loops:
        a = a + torch.eye(a.shape[0], dtype=torch.float32, device=a.device)
    degree = a.sum(dim=1, keepdim=True)
    return a / degree.clamp(min=1)


def dot_attention_aggregation(features, adjacency):
    """Scaled dot-product attention weights restricted to neighbours; zero row if isolated."""
    m = features.shape[1]
    scores = features @ features.T / math.sqrt(m)
    has_neighbour = adjacency.any(dim=1, keepdim=True)
    # rows without neighbours keep their scores (softmax is finite) and are zeroed after
    allowed = adjacency | ~has_neighbour
    weights = torch.softmax(scores.masked_fill(~allowed, float("-inf")), dim=1)
    return weights * adjacency.to(weights.dtype)


def aggregate(weights, features, W):
    """Message passing step: weights @ features @ W, in features' dtype."""
    weights = weights.to(features.dtype)
    return (weights @ features) @ W.to(features.dtype)
