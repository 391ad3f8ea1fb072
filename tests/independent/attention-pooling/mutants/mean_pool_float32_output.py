"""mean_pool casts values with .float() "to be safe": float64 input gives a float32 output."""


def mean_pool(values, mask=None):
    """Masked mean computed after converting values to float32."""
    values = values.float()
    if mask is None:
        return values.mean(dim=0)
    kept = mask.float()
    return (kept.unsqueeze(1) * values).sum(dim=0) / kept.sum().clamp(min=1)
