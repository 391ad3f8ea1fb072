"""attend calls the scorer as score(keys, query) instead of score(query, keys).
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    weights = masked_softmax(score(keys, query), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
