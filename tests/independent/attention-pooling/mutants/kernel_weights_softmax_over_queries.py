"""kernel_weights takes the softmax over the wrong axis (queries, dim=0): columns sum to 1."""
import torch


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights normalised over queries instead of keys."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * h ** 2)
    return torch.softmax(scores, dim=0)
