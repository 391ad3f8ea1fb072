"""Outputs at padded positions are not zero (the forward run continues through padding).

Otherwise a correct two-run encoder: the forward direction comes from the right-padded batch,
the backward direction from a left-padded copy, so every real position and `final` are right.
"""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        batch, src_len = src.shape
        hidden = self.rnn.hidden_size
        positions = torch.arange(src_len, device=src.device).expand(batch, src_len)
        shift = (src_len - src_lengths).unsqueeze(1)
        embedded = self.embedding(src)
        index = (positions - shift).clamp(min=0)
        left = embedded.gather(1, index.unsqueeze(-1).expand_as(embedded))
        left = left * (positions >= shift).unsqueeze(-1).to(left.dtype)
        right_out, _ = self.rnn(embedded)
        left_out, _ = self.rnn(left)
        back_index = (positions + shift).clamp(max=src_len - 1)
        backward = left_out[..., hidden:].gather(1, back_index.unsqueeze(-1).expand(-1, -1, hidden))
        outputs = torch.cat([right_out[..., :hidden], backward], dim=-1)
        rows = torch.arange(batch, device=src.device)
        final = torch.cat([right_out[rows, src_lengths - 1, :hidden], backward[:, 0]], dim=-1)
        return outputs, final
