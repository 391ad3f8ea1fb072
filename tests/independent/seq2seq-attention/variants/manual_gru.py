"""Implementation of the seq2seq-attention assignment with a hand-written masked GRU recurrence.

The encoder steps through time itself with the bidirectional GRU's own parameters, freezing
the state at padded positions; attention uses einsum, torch.where and a hand-written softmax;
the loss gathers log-probabilities and averages them under a mask.
"""

import torch
import torch.nn.functional as F
from torch import nn


def _gru_cell(x, h, w_ih, w_hh, b_ih, b_hh):
    """One GRU update with PyTorch's gate layout (reset, update, new)."""
    i_r, i_z, i_n = F.linear(x, w_ih, b_ih).chunk(3, dim=-1)
    h_r, h_z, h_n = F.linear(h, w_hh, b_hh).chunk(3, dim=-1)
    r = torch.sigmoid(i_r + h_r)
    z = torch.sigmoid(i_z + h_z)
    n = torch.tanh(i_n + r * h_n)
    return (1 - z) * n + z * h


class Encoder(nn.Module):
    """Bidirectional GRU encoder whose two directions are unrolled by hand under a mask."""

    def __init__(self, vocab_size, emb_dim, hidden_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.hidden_dim = hidden_dim
        self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)

    def _direction(self, embedded, valid, suffix, times):
        rnn = self.rnn
        params = (
            getattr(rnn, "weight_ih_l0" + suffix),
            getattr(rnn, "weight_hh_l0" + suffix),
            getattr(rnn, "bias_ih_l0" + suffix),
            getattr(rnn, "bias_hh_l0" + suffix),
        )
        batch = embedded.shape[0]
        h = embedded.new_zeros(batch, self.hidden_dim)
        outputs = [None] * embedded.shape[1]
        for t in times:
            keep = valid[:, t].unsqueeze(1)  # (B, 1)
            h_new = _gru_cell(embedded[:, t], h, *params)
            h = torch.where(keep, h_new, h)  # padding leaves the state untouched
            outputs[t] = torch.where(keep, h_new, torch.zeros_like(h_new))
        return torch.stack(outputs, dim=1), h

    def forward(self, src, src_lengths):
        src_len = src.shape[1]
        embedded = self.embedding(src)
        valid = torch.arange(src_len, device=src.device) < src_lengths.to(src.device)[:, None]
        fwd, h_fwd = self._direction(embedded, valid, "", range(src_len))
        bwd, h_bwd = self._direction(embedded, valid, "_reverse", reversed(range(src_len)))
        return torch.cat([fwd, bwd], dim=-1), torch.cat([h_fwd, h_bwd], dim=-1)


class BahdanauAttention(nn.Module):
    """Additive attention with einsum and a hand-written masked softmax."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def forward(self, query, keys, mask=None):
        projected_q = torch.einsum("bq,hq->bh", query, self.W_q.weight)
        projected_k = torch.einsum("bsk,hk->bsh", keys, self.W_k.weight)
        hidden = torch.tanh(projected_q[:, None, :] + projected_k)
        scores = torch.einsum("bsh,h->bs", hidden, self.v.weight[0])
        if mask is None:
            mask = torch.ones_like(scores, dtype=torch.bool)
        mask = mask.to(torch.bool)
        very_low = torch.full_like(scores, float("-inf"))
        kept = torch.where(mask, scores, very_low)
        row_max = kept.amax(dim=-1, keepdim=True).detach()
        row_max = torch.where(torch.isfinite(row_max), row_max, torch.zeros_like(row_max))
        exps = torch.where(mask, torch.exp(kept - row_max), torch.zeros_like(scores))
        total = exps.sum(dim=-1, keepdim=True)
        weights = exps / torch.where(total > 0, total, torch.ones_like(total))
        context = torch.einsum("bs,bsk->bk", weights, keys)
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
        embedded = self.embedding(y_prev)
        context, weights = self.attention(s_prev, enc_outputs, src_mask)
        state = self.rnn(torch.cat([embedded, context], dim=-1), s_prev)
        logits = self.out(torch.cat([state, context, embedded], dim=-1))
        return logits, state, weights

    def forward(self, tgt_in, s0, enc_outputs, src_mask):
        state = s0
        steps = []
        for t in range(tgt_in.shape[1]):
            logits, state, weights = self.step(tgt_in[:, t], state, enc_outputs, src_mask)
            steps.append((logits, weights))
        logits, weights = zip(*steps, strict=True)
        return torch.stack(logits, dim=1), torch.stack(weights, dim=1)


class Seq2Seq(nn.Module):
    """Encoder, tanh bridge and attentive decoder."""

    def __init__(self, src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0):
        super().__init__()
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)

    def forward(self, src, src_lengths, tgt_in):
        enc_outputs, final = self.encoder(src, src_lengths)
        s0 = torch.tanh(self.bridge(final))
        src_mask = torch.arange(src.shape[1], device=src.device)[None, :] < src_lengths[:, None]
        return self.decoder(tgt_in, s0, enc_outputs, src_mask)

    def greedy_decode(self, src, src_lengths, bos_id, eos_id, max_len):
        enc_outputs, final = self.encoder(src, src_lengths)
        state = torch.tanh(self.bridge(final))
        src_mask = torch.arange(src.shape[1], device=src.device)[None, :] < src_lengths[:, None]
        batch = src.shape[0]
        previous = src.new_full((batch,), bos_id)
        finished = torch.zeros(batch, dtype=torch.bool, device=src.device)
        tokens = src.new_zeros(batch, 0)
        weights = enc_outputs.new_zeros(batch, 0, src.shape[1])
        while tokens.shape[1] < max_len and not bool(finished.all()):
            logits, state, step_weights = self.decoder.step(previous, state, enc_outputs, src_mask)
            padding = torch.full_like(previous, self.pad_id)
            chosen = torch.where(finished, padding, logits.argmax(dim=-1))
            tokens = torch.cat([tokens, chosen[:, None]], dim=1)
            weights = torch.cat([weights, step_weights[:, None, :]], dim=1)
            finished = finished | chosen.eq(eos_id)
            previous = chosen
        return tokens, weights


def sequence_loss(logits, targets, pad_id=0):
    """Masked mean of -log p(target) computed from log_softmax and gather."""
    log_probs = torch.log_softmax(logits, dim=-1)
    picked = log_probs.gather(-1, targets.unsqueeze(-1)).squeeze(-1)  # (B, T)
    real = (targets != pad_id).to(logits.dtype)
    return -(picked * real).sum() / real.sum()
