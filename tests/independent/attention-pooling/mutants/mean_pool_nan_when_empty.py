"""mean_pool returns NaN when the mask keeps no row (0 / 0)."""
import torch


def mean_pool(values, mask=None):
    """Masked mean of the rows of values; divides by the kept count even when it is 0."""
    if mask is None:
        mask = torch.ones(values.shape[0], dtype=torch.bool)
    kept = mask.to(values.dtype).unsqueeze(1)
    return (kept * values).sum(dim=0) / kept.sum()
