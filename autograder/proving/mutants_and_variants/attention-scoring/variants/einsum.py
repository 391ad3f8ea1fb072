"""torch.einsum throughout; masked softmax with -inf and nan_to_num for fully masked rows.

nan_to_num after the softmax is safe here: every position of a fully masked row was filled
by masked_fill, whose backward pass gives those positions a zero gradient.
"""

import math

import torch


def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bd,bnd->bn", query, keys)


def scaled_dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bd,bnd->bn", query, keys) / math.sqrt(keys.size(-1))


def general_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor) -> torch.Tensor:
    return torch.einsum("bq,qk,bnk->bn", query, W, keys)


def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    B, n, _ = keys.shape
    pairs = torch.cat([query[:, None, :].expand(B, n, query.shape[-1]), keys], dim=-1)
    return torch.einsum("h,bnh->bn", v, torch.tanh(torch.einsum("hc,bnc->bnh", W, pairs)))


def additive_score(query: torch.Tensor, keys: torch.Tensor, W_q: torch.Tensor,
                   W_k: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
    hidden = torch.einsum("hq,bq->bh", W_q, query)[:, None, :] + torch.einsum(
        "hk,bnk->bnh", W_k, keys)
    return torch.einsum("bnh,h->bn", torch.tanh(hidden), v)


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return scores.softmax(dim=-1)
    weights = scores.masked_fill(mask.logical_not(), -math.inf).softmax(dim=-1)
    return torch.nan_to_num(weights, nan=0.0)       # a fully masked row is 0/0 = NaN


def attend(query: torch.Tensor, keys: torch.Tensor, values: torch.Tensor | None = None,
           score=dot_score, mask: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
    values = keys if values is None else values
    weights = masked_softmax(score(query, keys), mask)
    return torch.einsum("bn,bnv->bv", weights, values), weights
