"""Decoder.forward embeds all of tgt_in at once and does each step's work itself, and
Decoder.step computes the additive attention itself, neither calling the other part."""

import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, enc_dim, hidden_dim, attn_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)

    def _attend(self, s_prev, enc_outputs, src_mask):
        att = self.attention
        scores = att.v(torch.tanh(att.W_q(s_prev)[:, None] + att.W_k(enc_outputs)))[..., 0]
        scores = scores.masked_fill(~src_mask, float("-inf"))
        scores = torch.where(src_mask.any(-1, keepdim=True), scores, torch.zeros_like(scores))
        weights = torch.softmax(scores, dim=-1) * src_mask
        return (weights[:, :, None] * enc_outputs).sum(1), weights

    def step(self, y_prev, s_prev, enc_outputs, src_mask):
        e = self.embedding(y_prev)
        c, a = self._attend(s_prev, enc_outputs, src_mask)
        s = self.rnn(torch.cat([e, c], dim=-1), s_prev)
        return self.out(torch.cat([s, c, e], dim=-1)), s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        embedded = self.embedding(tgt_in)                                # (B, T, E)
        s, logits, weights = s0, [], []
        for t in range(tgt_in.shape[1]):
            e = embedded[:, t]
            c, a = self._attend(s, enc_outputs, src_mask)
            s = self.rnn(torch.cat([e, c], dim=-1), s)
            logits.append(self.out(torch.cat([s, c, e], dim=-1)))
            weights.append(a)
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)
