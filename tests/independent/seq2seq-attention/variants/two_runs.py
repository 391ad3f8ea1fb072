"""Implementation of the seq2seq-attention assignment that reverses each sequence by re-padding.

The forward direction is read from a run over the right-padded batch, the backward direction
from a second run over the same batch shifted to the right (left-padded), so that both
directions meet every real token before any padding. Attention uses masked_fill with -inf and
a shifted exponential; greedy decoding writes into preallocated buffers and trims them.
"""

import torch
import torch.nn.functional as F
from torch import nn


class Encoder(nn.Module):
    """Bidirectional GRU encoder: right-padded run for one direction, left-padded for the other."""

    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def forward(self, src, src_lengths):
        batch, src_len = src.shape
        hidden = self.rnn.hidden_size
        lengths = src_lengths.to(src.device)
        positions = torch.arange(src_len, device=src.device).expand(batch, src_len)
        shift = (src_len - lengths).unsqueeze(1)  # (B, 1) amount of padding per row
        real = positions < lengths.unsqueeze(1)

        embedded = self.embedding(src)  # (B, S, E)
        # left-padded copy: position p holds original position p - shift
        source_index = (positions - shift).clamp(min=0)
        left = embedded.gather(1, source_index.unsqueeze(-1).expand_as(embedded))
        left = left * (positions >= shift).unsqueeze(-1).to(left.dtype)

        right_out, _ = self.rnn(embedded)
        left_out, _ = self.rnn(left)
        forward_half = right_out[..., :hidden]
        # original position t of the backward direction lives at t + shift in the left run
        back_index = (positions + shift).clamp(max=src_len - 1)
        backward_half = left_out[..., hidden:].gather(
            1, back_index.unsqueeze(-1).expand(-1, -1, hidden)
        )
        outputs = torch.cat([forward_half, backward_half], dim=-1)
        outputs = outputs * real.unsqueeze(-1).to(outputs.dtype)

        rows = torch.arange(batch, device=src.device)
        final = torch.cat([forward_half[rows, lengths - 1], backward_half[:, 0]], dim=-1)
        return outputs, final


class BahdanauAttention(nn.Module):
    """Additive attention; masked scores become -inf and the exponentials are shifted by hand."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        batch, src_len, _ = keys.shape
        q = self.W_q(query).unsqueeze(1).expand(-1, src_len, -1)
        scores = self.v(torch.tanh(q + self.W_k(keys)))[..., 0]  # (B, S)
        if mask is not None:
            scores = scores.masked_fill(~mask.to(torch.bool), float("-inf"))
        shift = scores.detach().amax(dim=-1, keepdim=True)
        shift = shift.masked_fill(torch.isinf(shift), 0.0)
        exps = torch.exp(scores - shift)  # exactly 0 at masked positions
        weights = exps / exps.sum(dim=-1, keepdim=True).clamp_min(torch.finfo(exps.dtype).tiny)
        context = (weights.unsqueeze(-1) * keys).sum(dim=1)
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
        e = self.embedding(y_prev)
        c, a = self.attention(s_prev, enc_outputs, src_mask)
        rnn_input = torch.cat([e, c], dim=-1)
        s = self.rnn(rnn_input, s_prev)
        return self.out(torch.cat([s, c, e], dim=-1)), s, a

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        logits, weights = [], []
        s = s0
        t = 0
        while t < tgt_in.shape[1]:
            step_logits, s, a = self.step(tgt_in[:, t], s, enc_outputs, src_mask)
            logits.append(step_logits)
            weights.append(a)
            t += 1
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)


class Seq2Seq(nn.Module):
    """Encoder, tanh bridge and attentive decoder."""

    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    @staticmethod
    def _source_mask(src, src_lengths):
        steps = torch.ones_like(src, dtype=torch.long).cumsum(dim=1)  # 1, 2, ..., S
        return steps <= src_lengths.to(src.device).unsqueeze(1)

    def forward(self, src, src_lengths, tgt_in):
        enc_outputs, final = self.encoder(src, src_lengths)
        s0 = torch.tanh(self.bridge(final))
        return self.decoder(tgt_in, s0, enc_outputs, self._source_mask(src, src_lengths))

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        enc_outputs, final = self.encoder(src, src_lengths)
        s = torch.tanh(self.bridge(final))
        src_mask = self._source_mask(src, src_lengths)
        batch, src_len = src.shape
        tokens = torch.full((batch, max_len), self.pad_id, dtype=torch.long, device=src.device)
        weights = enc_outputs.new_zeros(batch, max_len, src_len)
        alive = torch.ones(batch, dtype=torch.bool, device=src.device)
        y = torch.full((batch,), bos_id, dtype=torch.long, device=src.device)
        used = 0
        for t in range(max_len):
            logits, s, a = self.decoder.step(y, s, enc_outputs, src_mask)
            best = logits.argmax(dim=-1)
            tokens[:, t] = torch.where(alive, best, tokens[:, t])
            weights[:, t] = a
            used = t + 1
            alive = alive & (best != eos_id)
            if not bool(alive.any()):
                break
            y = best
        return tokens[:, :used], weights[:, :used]


def sequence_loss(logits, targets, pad_id=0):
    """Unreduced cross-entropy, zeroed at padding, summed and divided by the real-token count."""
    per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none")  # (B, T)
    real = targets.ne(pad_id)
    return per_token.masked_fill(~real, 0.0).sum() / real.sum().to(per_token.dtype)
