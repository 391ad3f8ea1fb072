"""Encoder runs the GRU on the padded batch: padding leaks into the backward direction.

Outputs are zeroed at padding afterwards and final is gathered at the last real token, so
everything looks right on full-length batches.
"""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        outputs, _ = self.rnn(self.embedding(src))                       # (B, S, 2H)
        real = torch.arange(src.shape[1]).unsqueeze(0) < src_lengths.unsqueeze(1)
        outputs = outputs * real.unsqueeze(-1)
        H = outputs.shape[-1] // 2
        last = outputs[torch.arange(src.shape[0]), src_lengths - 1, :H]
        return outputs, torch.cat([last, outputs[:, 0, H:]], dim=-1)
