"""K is transposed with transpose(1, 2) instead of transpose(-2, -1): right for 3-D inputs only.

With (B, H, S, d_k) keys it swaps the heads and the keys; 2-D inputs fail.
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = torch.matmul(Q, K.transpose(1, 2)) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(~mask, float("-inf"))
        scores = scores.masked_fill(~mask.any(-1, keepdim=True), 0.0)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(~mask, 0.0)
    return weights @ V, weights
