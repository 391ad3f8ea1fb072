"""Functions built from one another; the mask becomes an additive bias of 0 / -inf.

dot_score uses torch.linalg.vecdot; scaled dot is dot on a scaled query, general is dot on the
projected query q^T W, additive is concat with W = [W_q W_k]. Masked positions get a -inf bias
(a fully masked row gets none), and multiplying by the mask zeroes them afterwards.
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.linalg.vecdot(keys, query.unsqueeze(1))       # (B, n, d) . (B, 1, d) -> (B, n)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return dot_score(query / math.sqrt(keys.shape[-1]), keys)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return dot_score(query @ W, keys)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    pairs = torch.cat([query.unsqueeze(1).expand(B, n, -1), keys], dim=-1)
    return torch.tanh(pairs @ W.T) @ v


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    return concat_score(query, keys, torch.cat([W_q, W_k], dim=1), v)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    bias = torch.zeros_like(scores).masked_fill(~mask, -math.inf)
    bias = bias.masked_fill(~mask.any(dim=-1, keepdim=True), 0.0)   # an empty row: no -inf
    return torch.softmax(scores + bias, dim=-1) * mask


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.sum(weights[..., None] * values, dim=-2)
    return context, weights
