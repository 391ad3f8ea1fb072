"""`final`'s backward half is read at the last real token instead of the first token.

Both halves come from outputs[b, L-1], so the backward half is the state after one step.

Otherwise packed sequences with correct outputs.
"""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        packed = nn.utils.rnn.pack_padded_sequence(
            self.embedding(src), src_lengths.cpu(), batch_first=True, enforce_sorted=False
        )
        packed_outputs, _ = self.rnn(packed)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(
            packed_outputs, batch_first=True, total_length=src.shape[1]
        )
        rows = torch.arange(src.shape[0], device=src.device)
        final = outputs[rows, src_lengths.to(src.device) - 1]  # (B, 2H)
        return outputs, final
