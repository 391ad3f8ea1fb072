"""NaN gradients on fully masked rows: torch.where applied after an exp that overflows to inf.

The forward pass looks right (torch.where hides the inf, empty rows give zeros), but
backward multiplies a zero gradient by exp(+inf) and produces NaN.
"""

import torch


def masked_softmax(scores, mask=None):
    """Softmax over the last dimension; True in `mask` means the position may be attended."""
    if mask is None:
        return torch.softmax(scores, dim=-1)
    mask = mask.to(torch.bool)
    row_max = torch.where(mask, scores, float("-inf")).amax(dim=-1, keepdim=True)
    exps = torch.where(mask, torch.exp(scores - row_max), torch.zeros_like(scores))
    total = exps.sum(dim=-1, keepdim=True)
    return exps / total.clamp_min(torch.finfo(scores.dtype).tiny)
