"""torch.nn.functional.linear for the projections and a masked log_softmax, exponentiated.

Each score function is written with F.linear (x @ W.T); the weights are exp(log_softmax) of
the masked scores, with fully masked rows neutralised before and zeroed after.
"""

import math

import torch
import torch.nn.functional as F


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.matmul(keys, query.unsqueeze(2)).squeeze(2)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.matmul(keys / math.sqrt(keys.shape[2]), query.unsqueeze(2)).squeeze(2)


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    projected_keys = F.linear(keys, W)                          # W k_i: (B, n, d_q)
    return torch.matmul(projected_keys, query.unsqueeze(2)).squeeze(2)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    n = keys.size(1)
    pairs = torch.cat((query.unsqueeze(1).expand(-1, n, -1), keys), dim=2)
    return F.linear(torch.tanh(F.linear(pairs, W)), v.unsqueeze(0)).squeeze(2)


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    hidden = torch.tanh(F.linear(query, W_q).unsqueeze(1) + F.linear(keys, W_k))
    return F.linear(hidden, v.unsqueeze(0)).squeeze(2)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return F.softmax(scores, dim=-1)
    empty = ~mask.any(dim=-1, keepdim=True)
    filled = scores.masked_fill(~mask, -math.inf).masked_fill(empty, 0.0)
    return F.log_softmax(filled, dim=-1).exp().masked_fill(~mask, 0.0)


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    values = values if values is not None else keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.matmul(weights.unsqueeze(-2), values).squeeze(-2)
    return context, weights
