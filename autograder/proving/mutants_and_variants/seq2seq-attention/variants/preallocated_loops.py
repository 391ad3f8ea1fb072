"""Decoder.forward and greedy_decode write into preallocated tensors; greedy uses while."""

import torch
from torch import nn


class Decoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, enc_dim, hidden_dim, attn_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)

    def step(self, y_prev, s_prev, enc_outputs, src_mask):
        embedded = self.embedding(y_prev)
        context, weights = self.attention(s_prev, enc_outputs, src_mask)
        state = self.rnn(torch.cat((embedded, context), 1), s_prev)
        return self.out(torch.cat((state, context, embedded), 1)), state, weights

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        B, T = tgt_in.shape
        logits = s0.new_zeros(B, T, self.out.out_features)
        weights = s0.new_zeros(B, T, enc_outputs.shape[1])
        state = s0
        for t in range(T):
            step_logits, state, step_weights = self.step(tgt_in[:, t], state, enc_outputs,
                                                         src_mask)
            logits = logits.index_copy(1, torch.tensor([t]), step_logits.unsqueeze(1))
            weights = weights.index_copy(1, torch.tensor([t]), step_weights.unsqueeze(1))
        return logits, weights


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def encode(self, src, src_lengths):
        outputs, final = self.encoder(src, src_lengths)
        mask = torch.arange(src.shape[1])[None, :].expand_as(src) < src_lengths[:, None]
        return outputs, torch.tanh(self.bridge(final)), mask

    def forward(self, src, src_lengths, tgt_in):
        outputs, s0, mask = self.encode(src, src_lengths)
        return self.decoder(tgt_in, s0, outputs, mask)

    @torch.no_grad()
    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        outputs, state, mask = self.encode(src, src_lengths)
        B, S = src.shape
        tokens = torch.full((B, max_len), self.pad_id, dtype=torch.long)
        weights = torch.zeros(B, max_len, S)
        previous = torch.full((B,), bos_id, dtype=torch.long)
        finished = torch.zeros(B, dtype=torch.bool)
        t = 0
        while t < max_len and not bool(finished.all()):
            logits, state, weights[:, t] = self.decoder.step(previous, state, outputs, mask)
            previous = logits.argmax(1)
            tokens[:, t] = torch.where(finished, self.pad_id, previous)
            finished |= previous == eos_id
            t += 1
        return tokens[:, :t], weights[:, :t]
