"""fit_bandwidth without gradients: a scan of log h, then a golden-section search.

The contract counts any h within 1 % of the smallest loss as minimising, however found.
"""

import math

import torch


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    if spread == 0:
        return 1.0

    def loss(theta: float) -> float:
        with torch.no_grad():
            return leave_one_out_loss(keys, values,
                                      torch.tensor(theta, dtype=torch.float64)).item()

    step = 0.2
    thetas = [math.log(spread) - 10 + step * i for i in range(66)]
    losses = [loss(t) for t in thetas]
    best = min(range(len(thetas)), key=losses.__getitem__)
    low, high = thetas[best] - step, thetas[best] + step
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(30):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if loss(a) < loss(b):
            high = b
        else:
            low = a
    middle = (low + high) / 2
    return math.exp(middle if loss(middle) <= losses[best] else thetas[best])
