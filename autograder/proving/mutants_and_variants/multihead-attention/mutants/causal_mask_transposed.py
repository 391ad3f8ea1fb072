"""The causal mask is transposed: True on and above the diagonal, so queries see the future.
"""

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).triu()
