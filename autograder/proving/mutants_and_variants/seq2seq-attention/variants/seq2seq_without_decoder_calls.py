"""Seq2Seq.forward loops over decoder.step instead of calling the decoder, and
greedy_decode does each step's work itself instead of calling decoder.step."""

import torch
from torch import nn


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim,
                 pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim,
                               pad_id)

    def forward(self, src, src_lengths, tgt_in):
        outputs, final = self.encoder(src, src_lengths)
        s = torch.tanh(self.bridge(final))
        src_mask = torch.arange(src.shape[1])[None, :] < src_lengths[:, None]
        logits, weights = [], []
        for t in range(tgt_in.shape[1]):
            step_logits, s, a = self.decoder.step(tgt_in[:, t], s, outputs, src_mask)
            logits.append(step_logits)
            weights.append(a)
        return torch.stack(logits, 1), torch.stack(weights, 1)

    @torch.no_grad()
    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        outputs, final = self.encoder(src, src_lengths)
        s = torch.tanh(self.bridge(final))
        src_mask = torch.arange(src.shape[1])[None, :] < src_lengths[:, None]
        dec = self.decoder
        y = torch.full((src.shape[0],), bos_id, dtype=torch.long)
        finished = torch.zeros(src.shape[0], dtype=torch.bool)
        tokens, weights = [], []
        while len(tokens) < max_len and not finished.all():
            e = dec.embedding(y)
            c, a = dec.attention(s, outputs, src_mask)
            s = dec.rnn(torch.cat([e, c], dim=-1), s)
            y = dec.out(torch.cat([s, c, e], dim=-1)).argmax(-1)
            tokens.append(torch.where(finished, torch.full_like(y, self.pad_id), y))
            weights.append(a)
            finished = finished | (y == eos_id)
        return torch.stack(tokens, 1), torch.stack(weights, 1)
