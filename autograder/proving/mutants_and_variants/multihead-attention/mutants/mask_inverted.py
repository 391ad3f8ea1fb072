"""Inverted mask polarity: True blocks a position (nn.MultiheadAttention's rule, not ours).
"""

import math

import torch


def scaled_dot_product_attention(Q, K, V, mask=None):
    scores = Q @ K.transpose(-2, -1) / math.sqrt(Q.shape[-1])
    if mask is not None:
        scores = scores.masked_fill(mask, float("-inf"))        # True = blocked: wrong here
        scores = scores.masked_fill(mask.all(-1, keepdim=True), 0.0)
    weights = torch.softmax(scores, dim=-1)
    if mask is not None:
        weights = weights.masked_fill(mask, 0.0)
    return weights @ V, weights
