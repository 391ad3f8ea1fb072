"""mean_pool divides the masked sum by n (all rows) instead of the number of kept rows."""


def mean_pool(values, mask=None):
    """Masked mean of the rows of values -- but always divided by n."""
    if mask is None:
        return values.mean(dim=0)
    kept = mask.to(values.dtype).unsqueeze(1)
    return (kept * values).sum(dim=0) / values.shape[0]
