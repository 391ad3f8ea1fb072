"""`greedy_decode` never stops early: it always runs max_len steps (padding after eos).

Otherwise a straightforward Seq2Seq with batched greedy decoding and a done-mask.
"""

import torch
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def _encode(self, src, src_lengths):
        enc_outputs, final = self.encoder(src, src_lengths)
        s0 = torch.tanh(self.bridge(final))
        positions = torch.arange(src.shape[1], device=src.device)
        src_mask = positions.unsqueeze(0) < src_lengths.unsqueeze(1)
        return enc_outputs, s0, src_mask

    def forward(self, src, src_lengths, tgt_in):
        enc_outputs, s0, src_mask = self._encode(src, src_lengths)
        return self.decoder(tgt_in, s0, enc_outputs, src_mask)

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        enc_outputs, s, src_mask = self._encode(src, src_lengths)
        batch, src_len = src.shape
        y = torch.full((batch,), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(batch, dtype=torch.bool, device=src.device)
        tokens, weights = [], []
        for _ in range(max_len):
            logits, s, a = self.decoder.step(y, s, enc_outputs, src_mask)
            y = logits.argmax(dim=-1).masked_fill(done, self.pad_id)
            tokens.append(y)
            weights.append(a)
            done = done | (y == eos_id)
        if not tokens:
            return (
                torch.zeros(batch, 0, dtype=torch.long, device=src.device),
                enc_outputs.new_zeros(batch, 0, src_len),
            )
        return torch.stack(tokens, dim=1), torch.stack(weights, dim=1)
