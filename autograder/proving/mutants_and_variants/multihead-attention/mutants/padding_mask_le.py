"""padding_mask compares with <= instead of <: the first padded position counts as a token.
"""

import torch


def padding_mask(lengths, S):
    return torch.arange(S).unsqueeze(0) <= lengths.unsqueeze(1)
