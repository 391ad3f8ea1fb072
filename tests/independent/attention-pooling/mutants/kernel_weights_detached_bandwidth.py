"""kernel_weights converts bandwidth with float(): no gradient reaches a tensor bandwidth."""
import torch


def kernel_weights(queries, keys, bandwidth):
    """Gaussian kernel weights; h = float(bandwidth) cuts the autograd graph."""
    h = float(bandwidth)
    scores = -(queries[:, None] - keys[None, :]) ** 2 / (2 * h * h)
    return torch.softmax(scores, dim=1)
