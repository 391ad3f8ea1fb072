"""Masked scores filled with the dtype's lowest number instead of -inf, then zeroed."""

import torch
from torch import nn


class BahdanauAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        energy = self.v(torch.tanh(self.W_q(query).unsqueeze(-2) + self.W_k(keys)))[..., 0]
        if mask is not None:
            energy = energy.masked_fill(~mask, torch.finfo(energy.dtype).min)
        weights = energy.softmax(-1)
        if mask is not None:
            weights = weights * mask
        return (weights.unsqueeze(-1) * keys).sum(-2), weights
