"""attend accepts a mask but never passes it to masked_softmax.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys))
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
