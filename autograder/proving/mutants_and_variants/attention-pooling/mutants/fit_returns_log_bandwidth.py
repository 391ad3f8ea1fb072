"""fit_bandwidth returns the best theta = log h instead of h = exp(theta).
"""

import math

import torch


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    thetas = torch.linspace(math.log(spread) - 10, math.log(spread) + 3, 261,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    return thetas[int(torch.argmin(losses))].item()
