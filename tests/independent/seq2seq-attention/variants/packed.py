"""Implementation of the seq2seq-attention assignment with packed sequences, bmm and masked_fill.

Greedy decoding is batched and tracks finished rows with a done-mask.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Encoder(nn.Module):
    """Bidirectional GRU encoder that never lets padding reach the recurrence."""

    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        embedded = self.embedding(src)  # (B, S, E)
        lengths = src_lengths.detach().to("cpu", torch.int64)
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, lengths, batch_first=True, enforce_sorted=False
        )
        packed_outputs, h_n = self.rnn(packed)  # h_n (2, B, H), back in the original order
        outputs, _ = nn.utils.rnn.pad_packed_sequence(
            packed_outputs, batch_first=True, total_length=src.shape[1]
        )
        final = torch.cat([h_n[0], h_n[1]], dim=-1)  # (B, 2H)
        return outputs, final


class BahdanauAttention(nn.Module):
    """Additive attention: score_i = v(tanh(W_q q + W_k k_i))."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        hidden = torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))  # (B, S, h)
        scores = self.v(hidden).squeeze(-1)  # (B, S)
        if mask is None:
            weights = torch.softmax(scores, dim=-1)
        else:
            blocked = ~mask.to(torch.bool)
            filled = scores.masked_fill(blocked, torch.finfo(scores.dtype).min)
            weights = torch.softmax(filled, dim=-1).masked_fill(blocked, 0.0)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)  # (B, Dk)
        return context, weights


class Decoder(nn.Module):
    """GRUCell decoder that attends with its previous state."""

    def __init__(self, vocab_size, emb_dim, enc_dim, hidden_dim, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)

    def step(self, y_prev, s_prev, enc_outputs, src_mask):
        e = self.embedding(y_prev)  # (B, E)
        c, a = self.attention(s_prev, enc_outputs, src_mask)
        s = self.rnn(torch.cat([e, c], dim=-1), s_prev)
        logits = self.out(torch.cat([s, c, e], dim=-1))
        return logits, s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        s = s0
        all_logits, all_weights = [], []
        for t in range(tgt_in.shape[1]):
            logits, s, a = self.step(tgt_in[:, t], s, enc_outputs, src_mask)
            all_logits.append(logits)
            all_weights.append(a)
        return torch.stack(all_logits, dim=1), torch.stack(all_weights, dim=1)


class Seq2Seq(nn.Module):
    """Encoder, tanh bridge and attentive decoder."""

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
        src_mask = positions.unsqueeze(0) < src_lengths.to(src.device).unsqueeze(1)
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
            if bool(done.all()):
                break
        if not tokens:
            return (
                torch.zeros(batch, 0, dtype=torch.long, device=src.device),
                enc_outputs.new_zeros(batch, 0, src_len),
            )
        return torch.stack(tokens, dim=1), torch.stack(weights, dim=1)


def sequence_loss(logits, targets, pad_id=0):
    """Mean token cross-entropy over the positions whose target is not padding."""
    return F.cross_entropy(
        logits.reshape(-1, logits.shape[-1]), targets.reshape(-1), ignore_index=pad_id
    )
