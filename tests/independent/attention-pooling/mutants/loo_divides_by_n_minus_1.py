"""leave_one_out_loss averages the n squared errors with 1/(n-1) instead of 1/n."""
import torch


def leave_one_out_loss(keys, values, log_bandwidth):
    """Leave-one-out loss normalised by n - 1."""
    h = torch.exp(torch.as_tensor(log_bandwidth, dtype=keys.dtype))
    n = keys.shape[0]
    scores = -(keys[:, None] - keys[None, :]) ** 2 / (2 * h ** 2)
    eye = torch.eye(n, dtype=torch.bool)
    weights = torch.softmax(scores.masked_fill(eye, float("-inf")), dim=1)
    return ((weights @ values - values) ** 2).sum() / (n - 1)
