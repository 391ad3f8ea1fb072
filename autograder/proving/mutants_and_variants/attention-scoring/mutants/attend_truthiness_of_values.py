"""attend tests `if not values:` on a tensor, which raises for any values with several entries.

The plain-mode check should be `if values is None:`.
"""

import torch


def attend(query, keys, values=None, score=dot_score, mask=None):
    if not values:
        values = keys
    weights = masked_softmax(score(query, keys), mask)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
