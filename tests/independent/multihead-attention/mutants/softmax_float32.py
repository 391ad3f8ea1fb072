"""The softmax is forced to float32 (`dtype=torch.float32`): float64 is not preserved.

With float64 inputs the weights are float32 and the product with V fails.

Otherwise a straightforward masked_fill implementation.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is None:
        weights = torch.softmax(scores, dim=-1, dtype=torch.float32)
    else:
        blocked = ~mask.to(torch.bool)
        filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
        weights = torch.softmax(filled, dim=-1, dtype=torch.float32).masked_fill(blocked, 0.0)
    return weights @ V, weights
