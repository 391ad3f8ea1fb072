"""fit_bandwidth returns h as a 0-dim tensor, not a Python float.
"""

import math

import torch


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    thetas = torch.linspace(math.log(spread) - 10, math.log(spread) + 3, 521,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    return torch.exp(thetas[int(torch.argmin(losses))])
