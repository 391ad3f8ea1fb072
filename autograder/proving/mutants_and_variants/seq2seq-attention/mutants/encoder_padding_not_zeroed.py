"""Encoder's outputs at padded positions are not zero: the packed run is unpacked with
padding_value left to whatever the unpadded forward run produced."""

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
        out, h_n = self.rnn(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(out, batch_first=True,
                                                      total_length=src.shape[1])
        unpacked, _ = self.rnn(self.embedding(src))          # padding run through as tokens
        real = torch.arange(src.shape[1]).unsqueeze(0) < src_lengths.unsqueeze(1)
        outputs = torch.where(real.unsqueeze(-1), outputs, unpacked)
        return outputs, torch.cat([h_n[0], h_n[1]], dim=-1)
