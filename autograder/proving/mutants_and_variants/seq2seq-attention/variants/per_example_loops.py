"""Every part one example at a time: each source alone through the GRU, attention key by
key, greedy decoding row by row, the loss token by token."""

import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        B, S = src.shape
        outputs = []
        finals = []
        for b in range(B):
            n = int(src_lengths[b])
            states, h_n = self.rnn(self.embedding(src[b, :n]).unsqueeze(0))
            outputs.append(torch.cat([states[0], states.new_zeros(S - n, states.shape[-1])]))
            finals.append(torch.cat([h_n[0, 0], h_n[1, 0]]))
        return torch.stack(outputs), torch.stack(finals)


class BahdanauAttention(nn.Module):
    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        contexts, all_weights = [], []
        for b in range(keys.shape[0]):
            allowed = torch.ones(keys.shape[1], dtype=torch.bool) if mask is None else mask[b]
            scores = torch.stack([self.v(torch.tanh(self.W_q(query[b]) + self.W_k(k)))[0]
                                  for k in keys[b]])
            if allowed.any():
                weights = torch.zeros_like(scores)
                weights[allowed] = torch.softmax(scores[allowed], dim=0)
            else:
                weights = scores * 0
            all_weights.append(weights)
            contexts.append(weights @ keys[b])
        return torch.stack(contexts), torch.stack(all_weights)


class Seq2Seq(nn.Module):
    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def encode(self, src, src_lengths):
        outputs, final = self.encoder(src, src_lengths)
        mask = torch.stack([torch.arange(src.shape[1]) < n for n in src_lengths])
        return outputs, torch.tanh(self.bridge(final)), mask

    def forward(self, src, src_lengths, tgt_in):
        outputs, s0, mask = self.encode(src, src_lengths)
        return self.decoder(tgt_in, s0, outputs, mask)

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        outputs, s0, mask = self.encode(src, src_lengths)
        rows = []
        for b in range(src.shape[0]):
            y, s, tokens, weights = torch.tensor([bos_id]), s0[b:b + 1], [], []
            while len(tokens) < max_len:
                logits, s, a = self.decoder.step(y, s, outputs[b:b + 1], mask[b:b + 1])
                y = logits.argmax(-1)
                tokens.append(int(y))
                weights.append(a[0])
                if tokens[-1] == eos_id:
                    break
            rows.append((tokens, weights))
        L = max(len(tokens) for tokens, _ in rows)
        out = torch.full((src.shape[0], L), self.pad_id, dtype=torch.long)
        all_weights = torch.zeros(src.shape[0], L, src.shape[1])
        for b, (tokens, weights) in enumerate(rows):
            out[b, :len(tokens)] = torch.tensor(tokens)
            all_weights[b, :len(weights)] = torch.stack(weights)
        return out, all_weights


def sequence_loss(logits, targets, pad_id=0):
    terms = [-torch.log_softmax(logits[b, t], -1)[targets[b, t]]
             for b in range(targets.shape[0]) for t in range(targets.shape[1])
             if targets[b, t] != pad_id]
    return torch.stack(terms).mean()
