"""kernel_weights forgets the 2 in 2h^2: softmax(-(q - k)^2 / h^2)."""
import torch


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights with the denominator h^2 instead of 2 h^2."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (h ** 2)
    return torch.softmax(scores, dim=1)
