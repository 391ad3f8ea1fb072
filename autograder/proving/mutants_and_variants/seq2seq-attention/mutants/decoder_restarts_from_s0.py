"""Decoder.forward gives every step the initial state s0 instead of the previous step's."""

import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, enc_dim, hidden_dim, attn_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)

    def step(self, y_prev, s_prev, enc_outputs, src_mask):
        e = self.embedding(y_prev)
        c, a = self.attention(s_prev, enc_outputs, src_mask)
        s = self.rnn(torch.cat([e, c], dim=-1), s_prev)
        return self.out(torch.cat([s, c, e], dim=-1)), s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            step_logits, _, a = self.step(tgt_in[:, t], s0, enc_outputs, src_mask)
            logits.append(step_logits)
            weights.append(a)
        return torch.stack(logits, 1), torch.stack(weights, 1)
