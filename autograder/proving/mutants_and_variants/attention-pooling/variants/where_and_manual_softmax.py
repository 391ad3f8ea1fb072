"""torch.where for every mask and a hand-written softmax that subtracts the row maximum.

The bandwidth is converted with torch.as_tensor(..., dtype=queries.dtype), which keeps the
gradient of a tensor bandwidth; isolated nodes and empty pools are guarded before dividing.
"""

import math

import torch


def _softmax_rows(scores: torch.Tensor, allowed: torch.Tensor) -> torch.Tensor:
    """Softmax of each row over the allowed entries; a row with none allowed is zeros."""
    filled = torch.where(allowed, scores, torch.full_like(scores, -math.inf))
    top = filled.max(dim=-1, keepdim=True).values.detach()
    top = torch.where(torch.isfinite(top), top, torch.zeros_like(top))
    exps = torch.where(allowed, torch.exp(filled - top), torch.zeros_like(scores))
    total = exps.sum(dim=-1, keepdim=True)
    return exps / torch.where(total > 0, total, torch.ones_like(total))


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return values.sum(dim=0) / values.shape[0]
    picked = torch.where(mask[:, None], values, torch.zeros_like(values))
    return picked.sum(dim=0) / max(int(mask.sum()), 1)


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    scores = -0.5 * ((queries.unsqueeze(1) - keys.unsqueeze(0)) / h) ** 2
    return _softmax_rows(scores, torch.ones_like(scores, dtype=torch.bool))


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    return (weights * values.unsqueeze(0)).sum(dim=1), weights


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    h = torch.exp(log_bandwidth)
    scores = -0.5 * ((keys.unsqueeze(1) - keys.unsqueeze(0)) / h) ** 2
    others = ~torch.eye(keys.shape[0], dtype=torch.bool)
    predictions = (_softmax_rows(scores, others) * values.unsqueeze(0)).sum(dim=1)
    return (predictions - values).pow(2).mean()


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = float(keys.max() - keys.min())
    if spread <= 0:
        return 1.0
    thetas = torch.linspace(math.log(spread) - 10, math.log(spread) + 3, 66,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    theta = thetas[int(losses.argmin())].clone().requires_grad_(True)
    loss = leave_one_out_loss(keys, values, theta)
    lr = 1.0
    for _ in range(100):        # gradient descent with a step halved until the loss falls
        (grad,) = torch.autograd.grad(loss, theta)
        while lr > 1e-12:
            trial = (theta - lr * grad).detach().requires_grad_(True)
            trial_loss = leave_one_out_loss(keys, values, trial)
            if trial_loss < loss:
                theta, loss = trial, trial_loss
                lr *= 2
                break
            lr /= 2
        else:
            break
    return float(theta.exp())


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    N = adjacency.shape[0]
    linked = torch.where(torch.eye(N, dtype=torch.bool), torch.tensor(self_loops), adjacency)
    A = torch.where(linked, 1.0, 0.0).to(torch.float32)
    degree = A.sum(dim=1, keepdim=True)
    return torch.where(degree > 0, A / torch.where(degree > 0, degree, 1.0), 0.0)


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = features.matmul(features.transpose(0, 1)) / features.shape[1] ** 0.5
    return _softmax_rows(scores, adjacency)


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return weights.type(features.dtype).matmul(features.matmul(W))
