"""mean_pool zeroes the masked-out rows of values in place (modifies its input)."""
import torch


def mean_pool(values, mask=None):
    """Masked mean; writes zeros into the caller's values tensor."""
    if mask is None:
        return values.mean(dim=0)
    with torch.no_grad():
        values[~mask] = 0.0
    count = int(mask.sum())
    return values.sum(dim=0) / max(count, 1)
