"""nadaraya_watson returns (weights, predictions) instead of (predictions, weights)."""
import torch


def nadaraya_watson(queries, keys, values, bandwidth):
    """Nadaraya-Watson regression with the two outputs in the wrong order."""
    h = torch.as_tensor(bandwidth, dtype=queries.dtype)
    weights = torch.softmax(-(queries[:, None] - keys[None, :]) ** 2 / (2 * h ** 2), dim=1)
    return weights, weights @ values
