"""The softmax is computed in float32 whatever the input: float64 is not preserved.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        scores = scores.masked_fill(~mask.any(-1, keepdim=True), 0.0)
    weights = torch.softmax(scores.float(), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights.to(V.dtype) @ V, weights
