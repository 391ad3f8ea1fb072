"""attend returns detached weights (e.g. for plotting): no gradient flows through them.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights.detach()
