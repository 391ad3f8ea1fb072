"""leave_one_out_loss computes h = math.exp(float(theta)): no gradient reaches log_bandwidth.
"""

import math

import torch


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    h = math.exp(float(log_bandwidth))
    n = keys.shape[0]
    scores = -(keys[:, None] - keys[None, :]) ** 2 / (2 * h ** 2)
    itself = torch.eye(n, dtype=torch.bool)
    weights = torch.softmax(scores.masked_fill(itself, float("-inf")), dim=1)
    return ((weights @ values - values) ** 2).mean()
