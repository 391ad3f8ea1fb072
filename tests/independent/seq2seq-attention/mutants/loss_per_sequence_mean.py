"""`sequence_loss` is a mean of per-sequence means instead of a mean over all real tokens.

Tokens of short sequences weigh more than tokens of long ones.

Otherwise a masked cross-entropy that ignores padding.
"""

import torch.nn.functional as F


def sequence_loss(logits, targets, pad_id=0):
    per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, T)
    real = (targets != pad_id).to(per_token.dtype)
    per_sequence = (per_token * real).sum(dim=1) / real.sum(dim=1).clamp_min(1.0)
    return per_sequence.mean()
