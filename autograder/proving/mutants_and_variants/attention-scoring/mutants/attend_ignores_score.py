"""attend ignores its score argument and always uses the dot product.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if values is None:
        values = keys
    scores = torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)
    weights = masked_softmax(scores, mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
