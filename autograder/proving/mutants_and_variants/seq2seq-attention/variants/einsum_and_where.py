"""Attention with einsum and torch.where, the loss with log_softmax and gather."""

import torch
from torch import nn


class BahdanauAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        hidden = torch.tanh(self.W_q(query)[:, None, :] + self.W_k(keys))
        scores = torch.einsum("bsa,a->bs", hidden, self.v.weight[0])
        if mask is None:
            mask = torch.ones_like(scores, dtype=torch.bool)
        shifted = scores - torch.where(mask, scores, scores.new_tensor(-1e30)).amax(
            -1, keepdim=True).clamp_min(-1e30).detach()
        exps = torch.where(mask, torch.exp(torch.where(mask, shifted, 0.0)), 0.0)
        total = exps.sum(-1, keepdim=True)
        weights = exps / torch.where(total > 0, total, 1.0)
        return torch.einsum("bs,bsk->bk", weights, keys), weights


def sequence_loss(logits, targets, pad_id=0):
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)     # (B, T)
    real = targets != pad_id
    return -(picked * real).sum() / real.sum()
