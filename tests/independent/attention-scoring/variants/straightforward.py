"""Straightforward implementation of the attention-scoring assignment with matmul/bmm."""

import math

import torch


def dot_score(query, keys):
    """q . k_i for every key: (B, d) and (B, n, d) -> (B, n)."""
    return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)


def scaled_dot_score(query, keys):
    """q . k_i / sqrt(d_k)."""
    return dot_score(query, keys) / math.sqrt(keys.shape[-1])


def general_score(query, keys, W):
    """q^T W k_i with W of shape (d_q, d_k)."""
    projected = query @ W  # (B, d_k)
    return torch.bmm(keys, projected.unsqueeze(-1)).squeeze(-1)


def concat_score(query, keys, W, v):
    """v^T tanh(W [q; k_i]) with W (h, d_q + d_k), v (h,)."""
    n = keys.shape[1]
    expanded = query.unsqueeze(1).expand(-1, n, -1)  # (B, n, d_q)
    joined = torch.cat([expanded, keys], dim=-1)  # (B, n, d_q + d_k)
    hidden = torch.tanh(joined @ W.T)  # (B, n, h)
    return hidden @ v


def additive_score(query, keys, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k_i) (Bahdanau)."""
    hidden = torch.tanh((query @ W_q.T).unsqueeze(1) + keys @ W_k.T)  # (B, n, h)
    return hidden @ v


def masked_softmax(scores, mask=None):
    """Softmax over the last dimension; True in `mask` means the position may be attended."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool)
    filled = scores.masked_fill(~mask, float("-inf"))
    row_max = filled.amax(dim=-1, keepdim=True).detach()
    row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
    exps = torch.exp(filled - row_max)  # exactly 0 where masked
    total = exps.sum(dim=-1, keepdim=True)
    safe_total = torch.where(total > 0, total, torch.ones_like(total))
    return exps / safe_total


def attend(query, keys, values=None, score=dot_score, mask=None):
    """Return (context, weights); values=None means the keys are also the values."""
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
