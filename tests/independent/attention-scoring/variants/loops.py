"""Implementation of the attention-scoring assignment with explicit loops over the batch."""

import math

import torch


def dot_score(query, keys):
    """q . k_i, one batch element at a time."""
    rows = [keys[b] @ query[b] for b in range(query.shape[0])]
    return torch.stack(rows)


def scaled_dot_score(query, keys):
    """q . k_i / sqrt(d_k), one batch element at a time."""
    scale = 1.0 / math.sqrt(keys.shape[-1])
    rows = [(keys[b] @ query[b]) * scale for b in range(query.shape[0])]
    return torch.stack(rows)


def general_score(query, keys, W):
    """q^T W k_i, one batch element at a time."""
    rows = [keys[b] @ (W.T @ query[b]) for b in range(query.shape[0])]
    return torch.stack(rows)


def concat_score(query, keys, W, v):
    """v^T tanh(W [q; k_i]), looping over the batch and the keys."""
    rows = []
    for b in range(query.shape[0]):
        row = []
        for i in range(keys.shape[1]):
            joined = torch.cat([query[b], keys[b, i]])
            row.append(v @ torch.tanh(W @ joined))
        rows.append(torch.stack(row))
    return torch.stack(rows)


def additive_score(query, keys, W_q, W_k, v):
    """v^T tanh(W_q q + W_k k_i), one batch element at a time."""
    rows = []
    for b in range(query.shape[0]):
        hidden = torch.tanh(W_q @ query[b] + keys[b] @ W_k.T)  # (n, h)
        rows.append(hidden @ v)
    return torch.stack(rows)


def _row_softmax(row, row_mask):
    if row_mask is None:
        shifted = row - row.max()
        exps = torch.exp(shifted)
        return exps / exps.sum()
    # zeros that stay connected to the graph, so a fully masked row still has a gradient
    weights = row.masked_fill(torch.ones_like(row_mask), 0.0)
    index = torch.nonzero(row_mask, as_tuple=True)
    if index[0].numel() == 0:
        return weights
    kept = row[index]
    exps = torch.exp(kept - kept.max())
    return weights.index_put(index, exps / exps.sum())


def masked_softmax(scores, mask=None):
    """Row-by-row softmax over the last dimension; True in the mask means attendable."""
    if mask is not None:
        mask = mask.to(torch.bool).expand_as(scores)
    rows = []
    for b in range(scores.shape[0]):
        rows.append(_row_softmax(scores[b], None if mask is None else mask[b]))
    return torch.stack(rows)


def attend(query, keys, values=None, score=dot_score, mask=None):
    """Return (context, weights), computing each context vector in a loop."""
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    contexts = [weights[b] @ values[b] for b in range(weights.shape[0])]
    return torch.stack(contexts), weights
