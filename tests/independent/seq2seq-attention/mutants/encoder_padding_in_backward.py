"""Padding reaches the backward GRU: the padded batch is run without packing.

The backward direction therefore starts at the last padded position instead of the last real
token. Padded outputs are still zeroed and `final` is read at the right positions.
"""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        hidden = self.rnn.hidden_size
        outputs, _ = self.rnn(self.embedding(src))  # (B, S, 2H), padding included
        real = torch.arange(src.shape[1], device=src.device)[None, :] < src_lengths[:, None]
        outputs = outputs * real.unsqueeze(-1).to(outputs.dtype)
        rows = torch.arange(src.shape[0], device=src.device)
        final = torch.cat([outputs[rows, src_lengths - 1, :hidden], outputs[:, 0, hidden:]], dim=-1)
        return outputs, final
