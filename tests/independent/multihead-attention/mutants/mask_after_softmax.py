"""The mask is applied after the softmax: masked weights are zeroed without renormalising.

Rows with masked positions no longer sum to 1.

Otherwise a straightforward matmul implementation.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask.to(torch.bool), 0.0)
    return weights @ V, weights
