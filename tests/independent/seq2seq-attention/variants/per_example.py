"""Implementation of the seq2seq-attention assignment with explicit loops over the batch.

Each source sequence is run alone through the GRU, attention and the loss are computed row by
row, and greedy decoding decodes one row at a time before padding the rows to a common length.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Encoder(nn.Module):
    """Bidirectional GRU encoder run on each unpadded sequence separately."""

    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        src_len = src.shape[1]
        embedded = self.embedding(src)
        rows, finals = [], []
        for b in range(src.shape[0]):
            length = int(src_lengths[b])
            out_b, h_b = self.rnn(embedded[b : b + 1, :length])  # (1, L, 2H), (2, 1, H)
            rows.append(F.pad(out_b[0], (0, 0, 0, src_len - length)))  # zeros after L
            finals.append(torch.cat([h_b[0, 0], h_b[1, 0]]))
        return torch.stack(rows), torch.stack(finals)


class BahdanauAttention(nn.Module):
    """Additive attention computed one batch row at a time."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        contexts, all_weights = [], []
        for b in range(query.shape[0]):
            hidden = torch.tanh(self.W_q(query[b]) + self.W_k(keys[b]))  # (S, h)
            scores = self.v(hidden).squeeze(-1)  # (S,)
            if mask is None:
                weights = torch.softmax(scores, dim=0)
            else:
                row_mask = mask[b].to(torch.bool)
                if bool(row_mask.any()):
                    minus_inf = torch.full_like(scores, float("-inf"))
                    weights = torch.softmax(torch.where(row_mask, scores, minus_inf), dim=0)
                else:
                    weights = scores * 0.0  # nothing to attend: zeros, still in the graph
            contexts.append(weights @ keys[b])
            all_weights.append(weights)
        return torch.stack(contexts), torch.stack(all_weights)


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
        e = self.embedding(y_prev)
        c, a = self.attention(s_prev, enc_outputs, src_mask)
        s = self.rnn(torch.cat((e, c), dim=1), s_prev)
        logits = self.out(torch.cat((s, c, e), dim=1))
        return logits, s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        s = s0
        logits_steps, weight_steps = [], []
        for y_prev in tgt_in.unbind(dim=1):
            logits, s, a = self.step(y_prev, s, enc_outputs, src_mask)
            logits_steps.append(logits.unsqueeze(1))
            weight_steps.append(a.unsqueeze(1))
        return torch.cat(logits_steps, dim=1), torch.cat(weight_steps, dim=1)


class Seq2Seq(nn.Module):
    """Encoder, tanh bridge and attentive decoder."""

    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def _prepare(self, src, src_lengths):
        enc_outputs, final = self.encoder(src, src_lengths)
        s0 = torch.tanh(self.bridge(final))
        src_mask = torch.stack(
            [torch.arange(src.shape[1], device=src.device) < int(n) for n in src_lengths]
        )
        return enc_outputs, s0, src_mask

    def forward(self, src, src_lengths, tgt_in):
        enc_outputs, s0, src_mask = self._prepare(src, src_lengths)
        return self.decoder(tgt_in, s0, enc_outputs, src_mask)

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        enc_outputs, s0, src_mask = self._prepare(src, src_lengths)
        batch, src_len = src.shape
        row_tokens, row_weights = [], []
        for b in range(batch):
            y = torch.tensor([bos_id], dtype=torch.long, device=src.device)
            s = s0[b : b + 1]
            tokens, weights = [], []
            for _ in range(max_len):
                logits, s, a = self.decoder.step(y, s, enc_outputs[b : b + 1], src_mask[b : b + 1])
                y = logits.argmax(dim=-1)
                tokens.append(y[0])
                weights.append(a[0])
                if int(y[0]) == eos_id:
                    break
            row_tokens.append(tokens)
            row_weights.append(weights)
        steps = max((len(tokens) for tokens in row_tokens), default=0)
        if steps == 0:
            return (
                torch.zeros(batch, 0, dtype=torch.long, device=src.device),
                enc_outputs.new_zeros(batch, 0, src_len),
            )
        padded_tokens, padded_weights = [], []
        for tokens, weights in zip(row_tokens, row_weights, strict=True):
            missing = steps - len(tokens)
            padded_tokens.append(F.pad(torch.stack(tokens), (0, missing), value=self.pad_id))
            padded_weights.append(F.pad(torch.stack(weights), (0, 0, 0, missing)))
        return torch.stack(padded_tokens), torch.stack(padded_weights)


def sequence_loss(logits, targets, pad_id=0):
    """Sum of the real tokens' cross-entropies, row by row, divided by their number."""
    total = logits.new_zeros(())
    count = 0
    for b in range(targets.shape[0]):
        keep = targets[b] != pad_id
        if bool(keep.any()):
            total = total + F.cross_entropy(logits[b][keep], targets[b][keep], reduction="sum")
            count += int(keep.sum())
    return total / count
