"""sin fills the first half of the columns and cos the second half, instead of alternating.

Otherwise the right frequencies, computed in float64.
"""

import torch


def sinusoidal_positional_encoding(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position / torch.pow(10000.0, two_i / d_model)
    return torch.cat([torch.sin(angles), torch.cos(angles)], dim=1).to(torch.float32)
