"""Explicit Python loops over the batch and the keys, assembled with torch.stack.

Every score is a 0-dimensional tensor of the inputs' dtype; stacking (rather than writing into
a torch.zeros buffer) keeps the dtype and the gradients.
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    rows = []
    for b in range(B):
        rows.append(torch.stack([(query[b] * keys[b, i]).sum() for i in range(n)]))
    return torch.stack(rows)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    d = keys.shape[2]
    B, n, _ = keys.shape
    rows = []
    for b in range(B):
        rows.append(torch.stack([torch.dot(query[b], keys[b, i]) / math.sqrt(d)
                                 for i in range(n)]))
    return torch.stack(rows)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    rows = []
    for b in range(B):
        row = W.T @ query[b]                        # (d_k,) = (q^T W)^T
        rows.append(torch.stack([torch.dot(row, keys[b, i]) for i in range(n)]))
    return torch.stack(rows)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    rows = []
    for b in range(B):
        scores = []
        for i in range(n):
            pair = torch.cat([query[b], keys[b, i]])
            scores.append(torch.dot(v, torch.tanh(W @ pair)))
        rows.append(torch.stack(scores))
    return torch.stack(rows)


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    rows = []
    for b in range(B):
        projected_query = W_q @ query[b]
        rows.append(torch.stack([torch.dot(v, torch.tanh(projected_query + W_k @ keys[b, i]))
                                 for i in range(n)]))
    return torch.stack(rows)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    B, n = scores.shape
    rows = []
    for b in range(B):
        allowed = [i for i in range(n) if mask is None or bool(mask[b, i])]
        if not allowed:
            rows.append(scores[b] * 0)                   # zeros, still part of the graph
            continue
        kept = torch.softmax(scores[b, allowed], dim=0)      # softmax over the allowed keys
        weights, j = [], 0
        for i in range(n):
            if i in allowed:
                weights.append(kept[j])
                j += 1
            else:
                weights.append(scores.new_zeros(()))
        rows.append(torch.stack(weights))
    return torch.stack(rows)


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    B, n, _ = values.shape
    contexts = []
    for b in range(B):
        context = weights[b, 0] * values[b, 0]
        for i in range(1, n):
            context = context + weights[b, i] * values[b, i]
        contexts.append(context)
    return torch.stack(contexts), weights
