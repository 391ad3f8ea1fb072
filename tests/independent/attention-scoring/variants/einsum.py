"""Einsum-based implementation of the attention-scoring assignment."""

import math

import torch


def dot_score(query, keys):
    """q . k_i via einsum."""
    return torch.einsum("bd,bnd->bn", query, keys)


def scaled_dot_score(query, keys):
    """q . k_i / sqrt(d_k) via einsum."""
    return torch.einsum("bd,bnd->bn", query, keys) / math.sqrt(keys.size(-1))


def general_score(query, keys, W):
    """q^T W k_i via einsum, W (d_q, d_k)."""
    return torch.einsum("bq,qk,bnk->bn", query, W, keys)


def concat_score(query, keys, W, v):
    """v^T tanh(W [q; k_i]), splitting W into its query and key columns."""
    d_q = query.size(-1)
    W_query, W_key = W[:, :d_q], W[:, d_q:]
    pre = torch.einsum("hq,bq->bh", W_query, query).unsqueeze(1)
    pre = pre + torch.einsum("hk,bnk->bnh", W_key, keys)
    return torch.einsum("bnh,h->bn", torch.tanh(pre), v)


def additive_score(query, keys, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k_i) via einsum."""
    pre = torch.einsum("hq,bq->bh", W_q, query).unsqueeze(1)
    pre = pre + torch.einsum("hk,bnk->bnh", W_k, keys)
    return torch.einsum("bnh,h->bn", torch.tanh(pre), v)


def masked_softmax(scores, mask=None):
    """Softmax over the last dim; masked (False) positions get weight 0, empty rows all 0."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool).expand_as(scores)
    lowest = torch.finfo(scores.dtype).min
    filled = torch.where(mask, scores, torch.full_like(scores, lowest))
    weights = torch.softmax(filled, dim=-1)
    return torch.where(mask, weights, torch.zeros_like(weights))


def attend(query, keys, values=None, score=dot_score, mask=None):
    """Return (context, weights) with context = sum_i a_i v_i."""
    values = keys if values is None else values
    weights = masked_softmax(score(query, keys), mask)
    context = torch.einsum("bn,bnd->bd", weights, values)
    return context, weights
