"""attend ends with a bare .squeeze() on the context, which breaks batch size 1.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze()
    return context, weights
