"""attend ignores values=None (plain mode) and crashes instead of using the keys as values.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
