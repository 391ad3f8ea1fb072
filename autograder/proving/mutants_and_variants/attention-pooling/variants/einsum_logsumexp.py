"""torch.einsum throughout; softmaxes as exp(scores - logsumexp(scores)).

Fully masked pools and isolated nodes are handled with torch.where, and so is the
leave-one-out mask, which puts -inf on the diagonal (adding eye * -inf instead would give
0 * inf = NaN off the diagonal).
"""

import math

import torch


def mean_pool(values: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        mask = torch.ones(values.shape[0], dtype=torch.bool)
    kept = mask.to(values.dtype)
    count = kept.sum()
    share = torch.where(count > 0, kept / torch.where(count > 0, count, 1.0), kept)
    return torch.einsum("n,nd->d", share, values)


def _log_weights(scores: torch.Tensor) -> torch.Tensor:
    return scores - torch.logsumexp(scores, dim=-1, keepdim=True)


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    squared = torch.einsum("mn,mn->mn", queries[:, None] - keys, queries[:, None] - keys)
    return torch.exp(_log_weights(-squared / (2 * h.square())))


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    weights = kernel_weights(queries, keys, bandwidth)
    return torch.einsum("mn,n->m", weights, values), weights


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    n = keys.shape[0]
    h = log_bandwidth.exp()
    scores = -(keys[:, None] - keys[None, :]) ** 2 / (2 * h * h)
    off_diagonal = ~torch.eye(n, dtype=torch.bool)
    scores = torch.where(off_diagonal, scores, torch.full_like(scores, -math.inf))
    residual = torch.einsum("kn,n->k", torch.exp(_log_weights(scores)), values) - values
    return torch.einsum("k,k->", residual, residual) / n


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    if spread == 0:
        return 1.0
    thetas = torch.linspace(math.log(spread) - 11, math.log(spread) + 4, 151,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    theta = thetas[int(losses.argmin())].clone().requires_grad_(True)
    best = (losses.min().item(), theta.item())
    lr = 0.1
    for _ in range(80):
        loss = leave_one_out_loss(keys, values, theta)
        if loss.item() < best[0]:
            best = (loss.item(), theta.item())
        (grad,) = torch.autograd.grad(loss, theta)
        with torch.no_grad():
            theta = (theta - lr * torch.sign(grad)).requires_grad_(True)
        lr *= 0.93
    return math.exp(best[1])


def mean_aggregation(adjacency: torch.Tensor, self_loops: bool = False) -> torch.Tensor:
    A = adjacency | torch.eye(adjacency.shape[0], dtype=torch.bool) if self_loops else adjacency
    A = A.float()
    degree = torch.einsum("vu->v", A)
    inverse = torch.where(degree > 0, 1 / torch.where(degree > 0, degree, 1.0), 0.0)
    return torch.einsum("v,vu->vu", inverse, A)


def dot_attention_aggregation(features: torch.Tensor, adjacency: torch.Tensor) -> torch.Tensor:
    scores = torch.einsum("vm,um->vu", features, features) / math.sqrt(features.shape[1])
    isolated = ~adjacency.any(dim=1, keepdim=True)
    masked = torch.where(adjacency | isolated, scores, torch.full_like(scores, -math.inf))
    weights = torch.exp(_log_weights(masked))
    return torch.where(adjacency, weights, torch.zeros_like(weights))


def aggregate(weights: torch.Tensor, features: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return torch.einsum("vu,um,mk->vk", weights.to(features.dtype), features, W)
