"""Uses .squeeze() without a dim, which collapses the batch (or key) axis of size 1.

Otherwise a straightforward matmul/bmm implementation.
"""

import torch


def dot_score(query, keys):
    """q . k_i for every key: (B, d) and (B, n, d) -> (B, n)."""
    return torch.bmm(keys, query.unsqueeze(-1)).squeeze()


def general_score(query, keys, W):
    """q^T W k_i with W of shape (d_q, d_k)."""
    projected = query @ W  # (B, d_k)
    return torch.bmm(keys, projected.unsqueeze(-1)).squeeze()


def attend(query, keys, values=None, score=dot_score, mask=None):
    """Return (context, weights); values=None means the keys are also the values."""
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze()
    return context, weights
