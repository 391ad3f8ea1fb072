"""fit_bandwidth: plain gradient descent from h = 1, fixed step, no scan first.

No scan of theta first: for data whose keys are not on the scale of 1, or whose loss is flat
around h = 1, 200 steps of 0.1 x the gradient end far from the smallest loss.
"""

import math

import torch


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    theta = torch.tensor(0.0, dtype=torch.float64, requires_grad=True)
    for _ in range(200):
        loss = leave_one_out_loss(keys, values, theta)
        (grad,) = torch.autograd.grad(loss, theta)
        with torch.no_grad():
            theta -= 0.1 * grad
    return math.exp(theta.item())
