"""Attention pooling masking with torch.where and the dtype's most negative finite number.

No -inf anywhere: masked scores become finfo(dtype).min, the softmax is multiplied by
the mask and renormalised (zero rows stay zero). Kernel scores are written as
-((q - k) / h)^2 / 2 with torch.nn.functional.log_softmax. fit_bandwidth runs Adam
from the three best local minima of a grid.
"""
import math

import torch
import torch.nn.functional as F


def _masked_softmax(scores, mask):
    """Softmax of scores over the last dim restricted to mask; rows with no True give zeros."""
    very_negative = torch.finfo(scores.dtype).min
    filled = torch.where(mask, scores, torch.full_like(scores, very_negative))
    w = F.softmax(filled, dim=-1) * mask.to(scores.dtype)
    total = w.sum(dim=-1, keepdim=True)
    return w / torch.where(total > 0, total, torch.ones_like(total))


def mean_pool(values, mask=None):
    """Weights 1/|kept| on kept rows (0 elsewhere) applied as a matrix-vector product."""
    if mask is None:
        mask = torch.ones(values.shape[0], dtype=torch.bool, device=values.device)
    count = mask.sum().to(values.dtype)
    weights = torch.where(mask, 1.0 / torch.clamp(count, min=1.0), torch.zeros_like(count))
    return weights.to(values.dtype) @ values


def _h(bandwidth, dtype):
    """bandwidth as a tensor of the wanted dtype."""
    return bandwidth.to(dtype) if torch.is_tensor(bandwidth) else torch.tensor(bandwidth,
                                                                              dtype=dtype)


def kernel_weights(queries, keys, bandwidth):
    """exp(log_softmax(-0.5 * ((q_j - k_i) / h)^2)) over keys i."""
    h = _h(bandwidth, queries.dtype)
    z = (queries.unsqueeze(-1) - keys.unsqueeze(0)) / h
    return F.log_softmax(-0.5 * z * z, dim=-1).exp()


def nadaraya_watson(queries, keys, values, bandwidth):
    """(weights @ values, weights)."""
    weights = kernel_weights(queries, keys, bandwidth)
    return (weights * values.unsqueeze(0)).sum(dim=-1), weights


def leave_one_out_loss(keys, values, log_bandwidth):
    """Leave-one-out loss: the diagonal is excluded by the mask in _masked_softmax."""
    h = torch.exp(_h(log_bandwidth, keys.dtype))
    n = keys.shape[0]
    z = (keys.unsqueeze(-1) - keys.unsqueeze(0)) / h
    mask = ~torch.eye(n, dtype=torch.bool, device=keys.device)
    weights = _masked_softmax(-0.5 * z * z, mask)
    return F.mse_loss(weights @ values, values)


def fit_bandwidth(keys, values):
    """Multi-start Adam on theta = log h from the best grid local minima."""
    k = keys.detach().double().reshape(-1)
    v = values.detach().double().reshape(-1)
    diffs = (k.unsqueeze(0) - k.unsqueeze(1)).abs()
    nonzero = diffs[diffs > 0]
    if nonzero.numel() == 0:
        return 1.0
    grid = torch.linspace(math.log(nonzero.min()) - 4, math.log(nonzero.max()) + 4, 100,
                          dtype=torch.float64)
    with torch.no_grad():
        losses = torch.tensor([leave_one_out_loss(k, v, t).item() for t in grid],
                              dtype=torch.float64)
    # local minima of the grid, best first
    left = torch.cat([torch.tensor([float("inf")], dtype=torch.float64), losses[:-1]])
    right = torch.cat([losses[1:], torch.tensor([float("inf")], dtype=torch.float64)])
    minima = torch.nonzero((losses <= left) & (losses <= right)).flatten()
    starts = minima[torch.argsort(losses[minima])][:3]

    best_theta = grid[int(losses.argmin())].item()
    best_loss = losses.min().item()
    for s in starts.tolist():
        theta = grid[s].clone().requires_grad_(True)
        opt = torch.optim.Adam([theta], lr=0.03)
        for _ in range(60):
            opt.zero_grad()
            loss = leave_one_out_loss(k, v, theta)
            if loss.item() < best_loss:
                best_loss, best_theta = loss.item(), theta.item()
            loss.backward()
            opt.step()
    return math.exp(best_theta)


def mean_aggregation(adjacency, self_loops=False):
    """float32 D^-1 A (D^-1 (A + I) with self loops) via torch.where."""
    n = adjacency.shape[0]
    eye = torch.eye(n, dtype=torch.bool, device=adjacency.device)
    a = torch.where(eye, torch.tensor(bool(self_loops)), adjacency)
    a = a.to(torch.float32)
    deg = a.sum(dim=-1, keepdim=True)
    return torch.where(deg > 0, a / torch.clamp(deg, min=1.0), torch.zeros_like(a))


def dot_attention_aggregation(features, adjacency):
    """Masked softmax of x_v . x_u / sqrt(M) over the neighbours u of v."""
    scores = features @ features.t() * (1.0 / math.sqrt(features.shape[-1]))
    return _masked_softmax(scores, adjacency)


def aggregate(weights, features, W):
    """torch.linalg.multi_dot([weights, features, W]) in features' dtype."""
    return torch.linalg.multi_dot([weights.to(features.dtype), features, W.to(features.dtype)])
