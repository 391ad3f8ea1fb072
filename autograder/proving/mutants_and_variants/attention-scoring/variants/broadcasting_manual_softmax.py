"""Broadcasting with * and .sum(-1), and a hand-written numerically stable masked softmax.

The softmax subtracts the (detached) row maximum over the allowed keys, exponentiates, zeroes
the masked positions and divides by the row sum clamped at 1: an allowed row's sum is at
least exp(0) = 1, a fully masked row's is 0 and its weights stay 0.
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return (query.unsqueeze(1) * keys).sum(dim=-1)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    d_k = keys.shape[-1]
    return (query[:, None, :] * keys).sum(-1) / math.sqrt(d_k)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    row = (query.unsqueeze(-1) * W).sum(dim=1)                  # (B, d_q, 1) * (d_q, d_k)
    return (row.unsqueeze(1) * keys).sum(dim=-1)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    n = keys.shape[1]
    pairs = torch.cat([query.unsqueeze(1).expand(-1, n, -1), keys], dim=-1)    # (B, n, c)
    hidden = (pairs.unsqueeze(2) * W).sum(dim=-1)               # (B, n, 1, c) * (h, c)
    return (torch.tanh(hidden) * v).sum(dim=-1)


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    projected_query = (query.unsqueeze(1) * W_q).sum(-1)         # (B, 1, d_q) * (h, d_q)
    projected_keys = (keys.unsqueeze(2) * W_k).sum(-1)           # (B, n, 1, d_k) * (h, d_k)
    return (torch.tanh(projected_query.unsqueeze(1) + projected_keys) * v).sum(-1)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    lowest = torch.finfo(scores.dtype).min
    top = scores.masked_fill(~mask, lowest).amax(dim=-1, keepdim=True).detach()
    shifted = (scores - top).masked_fill(~mask, 0.0)             # <= 0 where allowed
    exps = torch.exp(shifted) * mask
    return exps / exps.sum(dim=-1, keepdim=True).clamp_min(1.0)


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = (weights.unsqueeze(-1) * values).sum(dim=1)      # (B, n, 1) * (B, n, d_v)
    return context, weights
