"""fit_bandwidth returns the optimal theta = log h instead of h = exp(theta)."""
import math

import torch


def fit_bandwidth(keys, values):
    """Grid + Adam on theta = log h; returns theta itself."""
    k = keys.detach().double()
    v = values.detach().double()
    n = k.shape[0]
    eye = torch.eye(n, dtype=torch.bool)

    def loss_fn(theta):
        """Leave-one-out loss at theta = log h."""
        h = torch.exp(theta)
        s = -(k[:, None] - k[None, :]) ** 2 / (2 * h ** 2)
        w = torch.softmax(s.masked_fill(eye, float("-inf")), dim=1)
        return ((w @ v - v) ** 2).mean()

    spread = (k.max() - k.min()).item()
    if spread <= 0:
        return 0.0
    grid = torch.linspace(math.log(spread) - 10, math.log(spread) + 4, 141, dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([loss_fn(t) for t in grid])
    theta = grid[int(losses.argmin())].clone().requires_grad_(True)
    best_t, best_l = theta.item(), losses.min().item()
    opt = torch.optim.Adam([theta], lr=0.05)
    for _ in range(100):
        opt.zero_grad()
        loss = loss_fn(theta)
        if loss.item() < best_l:
            best_t, best_l = theta.item(), loss.item()
        loss.backward()
        opt.step()
    return best_t
