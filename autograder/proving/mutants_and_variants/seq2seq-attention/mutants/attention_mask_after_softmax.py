"""BahdanauAttention zeroes masked weights after an unmasked softmax (no renormalising)."""

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
        weights = torch.softmax(scores, dim=-1)
        if mask is not None:
            weights = weights * mask
        return torch.bmm(weights.unsqueeze(1), keys).squeeze(1), weights
