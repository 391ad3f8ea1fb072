"""`padding_mask` uses <= instead of <, so the first padded position counts as real."""

import torch


def padding_mask(lengths, S):
    return torch.arange(S, device=lengths.device).unsqueeze(0) <= lengths.unsqueeze(1)
