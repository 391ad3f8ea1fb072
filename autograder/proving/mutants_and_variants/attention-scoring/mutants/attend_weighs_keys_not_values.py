"""attend always weighs the keys, even in key-value mode: the values are ignored.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
    return context, weights
