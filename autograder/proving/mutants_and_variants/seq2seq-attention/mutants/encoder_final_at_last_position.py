"""Encoder's final forward state is read at position S-1, on padding for short rows."""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        packed = nn.utils.rnn.pack_padded_sequence(self.embedding(src), src_lengths.cpu(),
                                                   batch_first=True, enforce_sorted=False)
        out, _ = self.rnn(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True,
                                                      total_length=src.shape[1])
        H = outputs.shape[-1] // 2
        return outputs, torch.cat([outputs[:, -1, :H], outputs[:, 0, H:]], dim=-1)
