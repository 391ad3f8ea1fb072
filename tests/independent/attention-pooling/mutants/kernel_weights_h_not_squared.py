"""kernel_weights divides by 2h instead of 2h^2."""
import torch


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights with h where h^2 belongs."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * h)
    return torch.softmax(scores, dim=1)
