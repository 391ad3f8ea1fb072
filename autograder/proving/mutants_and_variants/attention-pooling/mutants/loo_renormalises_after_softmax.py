"""leave_one_out_loss zeroes the diagonal after the softmax and renormalises: NaN for a tiny h.

Right in exact arithmetic; but for a small h the softmax gives each key's own column all
the weight, the others underflow to 0, and the renormalisation divides 0 by 0.
"""

import torch


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    h = torch.exp(log_bandwidth)
    n = keys.shape[0]
    weights = torch.softmax(-(keys[:, None] - keys[None, :]) ** 2 / (2 * h ** 2), dim=1)
    weights = weights * (1 - torch.eye(n, dtype=weights.dtype))
    weights = weights / weights.sum(dim=1, keepdim=True)
    return ((weights @ values - values) ** 2).mean()
