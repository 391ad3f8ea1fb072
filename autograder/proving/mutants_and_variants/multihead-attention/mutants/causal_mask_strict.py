"""The causal mask leaves out the diagonal: no query may attend to its own position.
"""

import torch


def causal_mask(T, device=None):
    return torch.ones(T, T, dtype=torch.bool, device=device).tril(diagonal=-1)
