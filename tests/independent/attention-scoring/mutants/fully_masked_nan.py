"""Fully masked rows give NaN: masked_fill with -inf followed by a plain softmax.

Otherwise a straightforward matmul/bmm implementation.
"""

import torch


def masked_softmax(scores, mask=None):
    """Softmax over the last dimension; True in `mask` means the position may be attended."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(~mask.to(torch.bool), float("-inf"))
    return torch.softmax(filled, dim=-1)
