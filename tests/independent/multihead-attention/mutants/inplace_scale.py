"""Modifies the caller's Q in place (`Q /= sqrt(d_k)`) before computing the scores.

Otherwise a straightforward masked_fill implementation.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    Q /= math.sqrt(Q.shape[-1])
    scores = Q @ K.transpose(-2, -1)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)
    else:
        blocked = ~mask.to(torch.bool)
        filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
        weights = torch.softmax(filled, dim=-1).masked_fill(blocked, 0.0)
    return weights @ V, weights
