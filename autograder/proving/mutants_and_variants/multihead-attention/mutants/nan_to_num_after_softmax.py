"""An additive -inf mask and NaN replaced after the softmax: right values, NaN gradients.

torch.nan_to_num fixes the forward pass only; the backward pass of a query with nothing to
attend goes through the softmax's NaN and the addition passes it on to the scores.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        additive = torch.zeros(mask.shape, dtype=scores.dtype).masked_fill(~mask, float("-inf"))
        scores = scores + additive
    weights = torch.nan_to_num(torch.softmax(scores, dim=-1), nan=0.0)
    return weights @ V, weights
