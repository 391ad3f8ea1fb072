"""The causal mask excludes the diagonal: True strictly below it, so no query sees itself.

The first query then has nothing to attend.
"""

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=-1)
