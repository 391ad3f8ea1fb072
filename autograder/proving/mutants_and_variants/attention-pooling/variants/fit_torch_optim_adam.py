"""fit_bandwidth with torch.optim.Adam on log h, started from the best point of a scan.

torch.optim's first use imports much of PyTorch (seconds): this variant checks that such a
fit still runs within a test cell's time limit.
"""

import math

import torch


def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    if spread == 0:
        return 1.0
    thetas = torch.linspace(math.log(spread) - 10, math.log(spread) + 3, 105,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    theta = torch.nn.Parameter(thetas[int(losses.argmin())].clone())
    best_loss, best_theta = losses.min().item(), theta.item()
    optimizer = torch.optim.Adam([theta], lr=0.02)
    for _ in range(150):
        optimizer.zero_grad()
        loss = leave_one_out_loss(keys, values, theta)
        if loss.item() < best_loss:
            best_loss, best_theta = loss.item(), theta.item()
        loss.backward()
        optimizer.step()
    return math.exp(best_theta)
