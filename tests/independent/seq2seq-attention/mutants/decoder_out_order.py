"""`out` is fed [s; e; c] instead of [s; c; e].

Otherwise a straightforward decoder.
"""

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
        logits = self.out(torch.cat([s, e, c], dim=-1))
        return logits, s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        s = s0
        all_logits, all_weights = [], []
        for t in range(tgt_in.shape[1]):
            logits, s, a = self.step(tgt_in[:, t], s, enc_outputs, src_mask)
            all_logits.append(logits)
            all_weights.append(a)
        return torch.stack(all_logits, dim=1), torch.stack(all_weights, dim=1)
