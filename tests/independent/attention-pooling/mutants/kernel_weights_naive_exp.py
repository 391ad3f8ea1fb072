"""kernel_weights uses naive exp(s) / sum exp(s): underflows to 0/0 = NaN for a tiny h."""
import torch


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights normalised without subtracting the row maximum."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    e = torch.exp(-(queries[:, None] - keys[None, :]) ** 2 / (2 * h ** 2))
    return e / e.sum(dim=1, keepdim=True)
