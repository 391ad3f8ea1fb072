"""Inverted mask polarity: positions where the mask is True are the ones blocked.

Otherwise a straightforward additive attention with masked_fill and bmm.
"""

import torch
from torch import nn


class BahdanauAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        scores = self.v(torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))).squeeze(-1)
        if mask is None:
            weights = torch.softmax(scores, dim=-1)
        else:
            blocked = mask.to(torch.bool)
            filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
            weights = torch.softmax(filled, dim=-1).masked_fill(blocked, 0.0)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
        return context, weights
