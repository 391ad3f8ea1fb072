"""nadaraya_watson computes its weights inline; leave_one_out_loss reuses kernel_weights.

nadaraya_watson is judged against the reference computed end to end; leave_one_out_loss
calls kernel_weights(keys[k:k+1], the other keys, h) once per observation.
"""

import torch


def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor, values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    scores = -torch.square(queries[:, None] - keys[None, :]) / (2 * bandwidth * bandwidth)
    weights = torch.softmax(scores, dim=-1)
    return torch.mv(weights, values), weights


def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    n = keys.shape[0]
    h = torch.exp(log_bandwidth)
    errors = []
    for k in range(n):
        others = torch.cat([torch.arange(k), torch.arange(k + 1, n)])
        weights = kernel_weights(keys[k:k + 1], keys[others], h)          # (1, n - 1)
        prediction = (weights @ values[others])[0]
        errors.append((prediction - values[k]) ** 2)
    return torch.stack(errors).mean()
