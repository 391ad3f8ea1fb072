"""Mask polarity inverted: the positions marked True are hidden instead of attended.

This is the key_padding_mask convention of nn.MultiheadAttention, not the course's.
"""

import torch


def masked_softmax(scores: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
    if mask is None:
        return torch.softmax(scores, dim=-1)
    filled = scores.masked_fill(mask, float("-inf"))
    all_hidden = mask.all(dim=-1, keepdim=True)
    filled = filled.masked_fill(all_hidden, 0.0)
    return torch.softmax(filled, dim=-1).masked_fill(mask, 0.0)
