"""The mask is applied after the softmax: masked weights are zeroed without renormalising.

Rows with a masked position no longer sum to 1.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    weights = torch.softmax(Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1]), dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ V, weights
