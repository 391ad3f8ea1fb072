"""torch.bmm throughout; masked scores filled with the dtype's most negative finite number.

Filling with torch.finfo(dtype).min never produces NaN; a fully masked row then gets uniform
weights, which multiplying by the mask turns into zeros.
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.bmm(query.unsqueeze(1), keys.transpose(1, 2)).squeeze(1)   # (B, 1, n)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    scale = 1.0 / math.sqrt(keys.shape[-1])
    return torch.bmm(keys, (query * scale).unsqueeze(2)).squeeze(2)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    B = query.shape[0]
    projected = torch.bmm(query.unsqueeze(1), W.expand(B, *W.shape))        # (B, 1, d_k)
    return torch.bmm(projected, keys.transpose(1, 2)).squeeze(1)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    pairs = torch.cat([query.unsqueeze(1).repeat(1, n, 1), keys], dim=2)    # (B, n, d_q + d_k)
    hidden = torch.tanh(torch.bmm(pairs, W.t().expand(B, *W.t().shape)))   # (B, n, h)
    return torch.bmm(hidden, v.view(1, -1, 1).expand(B, -1, 1)).squeeze(2)


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    B = query.shape[0]
    projected_query = torch.bmm(query.unsqueeze(1), W_q.t().expand(B, -1, -1))   # (B, 1, h)
    projected_keys = torch.bmm(keys, W_k.t().expand(B, -1, -1))                 # (B, n, h)
    hidden = torch.tanh(projected_query + projected_keys)
    return torch.bmm(hidden, v.view(1, -1, 1).expand(B, -1, 1)).squeeze(2)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    lowest = torch.finfo(scores.dtype).min
    weights = torch.softmax(scores.masked_fill(~mask, lowest), dim=-1)
    return weights * mask


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(values.transpose(1, 2), weights.unsqueeze(2)).squeeze(2)   # (B, d_v)
    return context, weights
