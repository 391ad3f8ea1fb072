"""`final`'s forward half is read at the last padded position S-1, not the last real token.

Otherwise packed sequences: outputs are right and the backward half of `final` is right.
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
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embedding(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        packed_outputs, _ = self.rnn(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(
            packed_outputs, batch_first=True, total_length=src.shape[1]
        )
        final = torch.cat([outputs[:, -1, :hidden], outputs[:, 0, hidden:]], dim=-1)
        return outputs, final
