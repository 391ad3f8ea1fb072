"""kernel_weights: exp(s) / sum exp(s) by hand, no maximum subtracted: NaN for a tiny h.

For a tiny bandwidth every exp(score) underflows to 0, and 0/0 is NaN.
"""

import torch


def kernel_weights(queries: torch.Tensor, keys: torch.Tensor, bandwidth) -> torch.Tensor:
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * bandwidth ** 2)
    exps = torch.exp(scores)
    return exps / exps.sum(dim=1, keepdim=True)
