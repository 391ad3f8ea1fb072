"""sin and cos are swapped: cos on even columns, sin on odd columns.

Otherwise a straightforward slice-assignment implementation.
"""

import torch


def sinusoidal_positional_encoding(max_len, d_model):
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    angles = position / torch.pow(10000.0, two_i / d_model)
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.cos(angles)
    pe[:, 1::2] = torch.sin(angles)
    return pe.to(torch.float32)
