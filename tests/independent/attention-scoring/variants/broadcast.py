"""Broadcast-and-sum implementation of the attention-scoring assignment."""

import math

import torch


def dot_score(query, keys):
    """q . k_i as an elementwise product summed over the feature axis."""
    return (query[:, None, :] * keys).sum(dim=-1)


def scaled_dot_score(query, keys):
    """q . k_i / sqrt(d_k) by broadcasting."""
    return (query[:, None, :] * keys).sum(dim=-1) * (keys.shape[-1] ** -0.5)


def general_score(query, keys, W):
    """q^T W k_i: project the keys with W, then broadcast against q."""
    projected_keys = torch.matmul(keys, W.transpose(0, 1))  # (B, n, d_q)
    return (query[:, None, :] * projected_keys).sum(dim=-1)


def concat_score(query, keys, W, v):
    """v^T tanh(W [q; k_i]) on an explicitly concatenated (B, n, d_q + d_k) tensor."""
    batch, n, _ = keys.shape
    q_rep = query[:, None, :].repeat(1, n, 1)
    joined = torch.cat((q_rep, keys), dim=2)
    hidden = torch.tanh(torch.matmul(joined, W.transpose(0, 1)))  # (B, n, h)
    return (hidden * v).sum(dim=-1)


def additive_score(query, keys, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k_i) by broadcasting."""
    q_part = (W_q[None, :, :] * query[:, None, :]).sum(-1)  # (B, h)
    k_part = torch.matmul(keys, W_k.transpose(0, 1))  # (B, n, h)
    return (torch.tanh(q_part[:, None, :] + k_part) * v).sum(dim=-1)


def masked_softmax(scores, mask=None):
    """Stable softmax over the last axis with a boolean keep-mask (True = may attend)."""
    if mask is None:
        mask = torch.ones_like(scores, dtype=torch.bool)
    mask = mask.to(torch.bool).expand_as(scores)
    neg_inf = torch.full_like(scores, -math.inf)
    row_max = torch.where(mask, scores, neg_inf).max(dim=-1, keepdim=True).values
    row_max = torch.nan_to_num(row_max.detach(), neginf=0.0)
    shifted = torch.where(mask, scores - row_max, torch.zeros_like(scores))
    exps = torch.where(mask, torch.exp(shifted), torch.zeros_like(scores))
    denom = exps.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(scores.dtype).tiny)
    return exps / denom


def attend(query, keys, values=None, score=dot_score, mask=None):
    """Return (context, weights); context is the weighted sum of the values."""
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = (weights[:, :, None] * values).sum(dim=1)
    return context, weights
