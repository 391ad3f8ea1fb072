"""greedy_decode stops as soon as any row emits eos."""

import torch
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def encode(self, src, src_lengths):
        outputs, final = self.encoder(src, src_lengths)
        src_mask = torch.arange(src.shape[1]).unsqueeze(0) < src_lengths.unsqueeze(1)
        return outputs, torch.tanh(self.bridge(final)), src_mask

    def forward(self, src, src_lengths, tgt_in):
        outputs, s0, src_mask = self.encode(src, src_lengths)
        return self.decoder(tgt_in, s0, outputs, src_mask)

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        outputs, s, src_mask = self.encode(src, src_lengths)
        y = torch.full((src.shape[0],), bos_id, dtype=torch.long)
        tokens, weights = [], []
        for _ in range(max_len):
            logits, s, a = self.decoder.step(y, s, outputs, src_mask)
            y = logits.argmax(-1)
            tokens.append(y)
            weights.append(a)
            if (y == eos_id).any():
                break
        return torch.stack(tokens, 1), torch.stack(weights, 1)

