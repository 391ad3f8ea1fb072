# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
#   kernelspec:
#     display_name: Python 3
#     language: python
#     name: python3
# ---

# %% [markdown] nbgrader={"grade": false, "grade_id": "intro", "locked": true, "schema_version": 3, "solution": false}
# # Exercise: an encoder–decoder with attention
#
# In this exercise you build, batch by batch, the translator of Bahdanau, Cho and Bengio
# (2015): a bidirectional GRU **encoder** reads the source; at every output step a GRU
# **decoder** asks an **additive attention** module which source positions matter now,
# reads their weighted sum $c_i$, and predicts the next token. You then train it on
# German number words → digits (*dreihundertvierundzwanzig* → `3 2 4`), where the words
# say the units before the tens, and look at the alignment your own model learns.
#
# **What you write and what it is worth** (24 points: 20 for your code, graded by its tests, and 4 for two
# written answers, graded by hand; every test cell states its points):
#
# | part | what | points |
# | --- | --- | --- |
# | 1 | `Encoder` (full-length batch · padded batch) | 1 + 2 |
# | 2 | `BahdanauAttention` (scores and context · masks) | 2 + 1 |
# | 3 | `Decoder.step` · `Decoder.forward` | 2 + 1 |
# | 4 | `Seq2Seq.forward` (wiring · end to end) · `greedy_decode` (rules · end to end) | 1 + 1 + 2 + 1 |
# | 5 | `sequence_loss` | 2 |
# | 6 | `train_epoch` · your model trained on the task | 2 + 2 |
# | written | two questions at the end, answered in words (graded by hand) | 2 + 2 |
#
# **How to work.** Replace each `raise NotImplementedError()` with your code; keep the
# names, signatures and **attribute names** given in the docstrings — the hidden tests
# load a reference model's `state_dict` into your modules, so `self.embedding`,
# `self.rnn`, `self.W_q` … must exist with exactly those names and shapes. Run the test
# cell after each part: its *visible* tests check shapes and properties you can reason
# about. When you submit, *hidden* tests in the same cells compare your modules, loaded
# with reference weights, with reference implementations on batches of mixed lengths,
# batch size 1, length 1, masks, and gradients. Every part is graded on its own where
# possible: a bug in your attention does not cost the decoder's points. Do not edit or
# delete the test cells. Before submitting: *Kernel → Restart & Run All*.
#
# **Rules.** Do not call `torch.nn.functional.scaled_dot_product_attention`,
# `torch.nn.MultiheadAttention` or `torch.nn.functional.multi_head_attention_forward`.
# Everything else in PyTorch is allowed.

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false}
import matplotlib.pyplot as plt
import torch
import torch.nn.functional as F
from torch import nn
from torch.testing import assert_close

import seq2seq_data as data

torch.manual_seed(0)

# %% [markdown] nbgrader={"grade": false, "grade_id": "the-data", "locked": true, "schema_version": 3, "solution": false}
# ## The data and the shapes
#
# `seq2seq_data.py` (next to this notebook) reads `number_words_de.tsv`: every number
# from 0 to 9999 as German word pieces and digits. Token ids are `torch.long`; **id 0 is
# padding**, 1 is `<bos>` (begin), 2 is `<eos>` (end). A `Batch` holds:
#
# | field | shape | meaning |
# | --- | --- | --- |
# | `src` | `(B, S)` | source ids, right-padded with 0 |
# | `src_lengths` | `(B,)` | real length of each source ($\ge 1$) |
# | `tgt_in` | `(B, T)` | `<bos>`, then the target ids: what the decoder reads |
# | `tgt_out` | `(B, T)` | the target ids, then `<eos>`: what it must predict |
#
# $B$ is the batch size, `S` the longest source and $T$ the longest target + 1 (in the
# formulas below, a source sentence has $n$ tokens). Below, $E$ is the embedding size,
# $H$ the size of each encoder direction, $d_s$ the decoder's state size (the decoder's
# `hidden_dim`, the model's `dec_hidden`), $d_a$ the attention's hidden size
# (`attn_dim`) and $V$ a vocabulary size.

# %% nbgrader={"grade": false, "grade_id": "load-data", "locked": true, "schema_version": 3, "solution": false}
pairs = data.load_pairs()
train_pairs, test_pairs = data.split(pairs, n_test=1000, seed=0)
src_vocab = data.Vocab(token for source, _ in train_pairs
                       for token in source)
tgt_vocab = data.Vocab("0123456789")
print(f"{len(train_pairs)} training pairs, {len(test_pairs)} held out")
print(f"source vocabulary: {len(src_vocab)} ids; "
      f"target vocabulary: {len(tgt_vocab)} ids")
print("example:", " ".join(pairs[324][0]), "->", " ".join(pairs[324][1]))

example_batch = data.make_batch([pairs[324], pairs[7], pairs[1021]],
                                src_vocab, tgt_vocab)
print("src\n", example_batch.src,
      "\nsrc_lengths", example_batch.src_lengths)
print("tgt_in\n", example_batch.tgt_in,
      "\ntgt_out\n", example_batch.tgt_out)

# %% [markdown] nbgrader={"grade": false, "grade_id": "the-model", "locked": true, "schema_version": 3, "solution": false}
# ## The model
#
# ![The encoder reads the source in both directions; at step i the decoder's previous state s(i-1) scores every encoder state h(j), the softmax of the scores weighs them into the context c(i), and the GRU cell turns y(i-1), c(i) and s(i-1) into s(i), from which y(i) is predicted.](seq2seq-attention.svg)
#
# With $x_1, \dots, x_n$ the source tokens and $y_0 = $ `<bos>`, $y_1, y_2, \dots$ the
# target tokens:
#
# $$h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j] \quad \text{(encoder, both directions)}$$
# $$s_0 = \tanh\big(W_s [\overrightarrow{h}_n; \overleftarrow{h}_1] + b_s\big) \quad \text{(the bridge)}$$
# $$e_{ij} = v^\top \tanh(W_q s_{i-1} + W_k h_j), \qquad
#   a_{ij} = \frac{\exp e_{ij}}{\sum_{k} \exp e_{ik}}, \qquad c_i = \sum_j a_{ij} h_j$$
# $$s_i = \mathrm{GRU}\big([E y_{i-1}; c_i],\, s_{i-1}\big), \qquad
#   p(y_i \mid y_{<i}, x) = \operatorname{softmax}\big(W_o [s_i; c_i; E y_{i-1}] + b_o\big)$$
#
# $E$ here is the target embedding matrix; $[\,\cdot\,;\,\cdot\,]$ stacks vectors.
# Note the **previous** state $s_{i-1}$ in the score: in Bahdanau et al.'s model, which
# this exercise builds, the decoder decides where to look *before* it updates its state.
# Querying with the new state $s_i$ instead builds a different model — the design of
# Luong et al. (2015), which attends with the current state and also combines the context
# with that new state — and the tests here count it as wrong.

# %% [markdown] nbgrader={"grade": false, "grade_id": "part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · The encoder (3 points)
#
# `Encoder(vocab_size, emb_dim, hidden_dim, pad_id=0)` holds
# `self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)` and
# `self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True, bidirectional=True)`.
# `forward(src, src_lengths)` returns
#
# * `outputs` `(B, S, 2H)`: $h_j = [\overrightarrow{h}_j; \overleftarrow{h}_j]$ for every
#   real position, **zero** at padded positions, still of length `S`;
# * `final` `(B, 2H)`: $[\overrightarrow{h}_n; \overleftarrow{h}_1]$ — the forward
#   direction's state after the **last real** token and the backward direction's state
#   after the **first** token.
#
# **The classic mistake: padding leaks into the backward GRU.** Run `self.rnn` on the
# padded batch as it is, and the backward direction starts at position `S - 1` — on
# padding — so every real state of a short row depends on how much padding it got. Each
# row must come out exactly as if it had been run alone. PyTorch's *packed sequences* do
# this: `nn.utils.rnn.pack_padded_sequence(embedded, src_lengths, batch_first=True,
# enforce_sorted=False)` before the GRU, `nn.utils.rnn.pad_packed_sequence(...,
# batch_first=True, total_length=S)` after it. With a packed input, the GRU's second
# output `h_n` `(2, B, H)` holds the forward state after each row's last real token
# (`h_n[0]`) and the backward state after its first (`h_n[1]`). (`pack_padded_sequence`
# wants the lengths on the CPU.)

# %% nbgrader={"grade": false, "grade_id": "encoder", "locked": false, "schema_version": 3, "solution": true}
class Encoder(nn.Module):
    """Bidirectional GRU encoder.

    forward(src (B, S) long, src_lengths (B,) long)
    -> outputs (B, S, 2H), zero at padding;
       final (B, 2H) = [forward last; backward first].
    """

    def __init__(self, vocab_size: int, emb_dim: int, hidden_dim: int,
                 pad_id: int = 0):
        super().__init__()
        ### BEGIN SOLUTION
        self.embedding = nn.Embedding(vocab_size, emb_dim,
                                      padding_idx=pad_id)
        self.rnn = nn.GRU(emb_dim, hidden_dim, batch_first=True,
                          bidirectional=True)
        ### END SOLUTION

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor):
        ### BEGIN SOLUTION
        S = src.shape[1]
        embedded = self.embedding(src)                  # (B, S, E)
        packed = nn.utils.rnn.pack_padded_sequence(
            embedded, src_lengths.cpu(), batch_first=True,
            enforce_sorted=False)
        packed_outputs, h_n = self.rnn(packed)          # h_n: (2, B, H)
        outputs, _ = nn.utils.rnn.pad_packed_sequence(  # (B, S, 2H)
            packed_outputs, batch_first=True, total_length=S)
        final = torch.cat([h_n[0], h_n[1]], dim=-1)     # (B, 2H)
        return outputs, final
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-encoder-full-length", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-encoder-full-length")
### END HIDDEN TESTS
_encoder = Encoder(vocab_size=12, emb_dim=4, hidden_dim=5)
_src = torch.tensor([[3, 4, 5, 6], [7, 8, 9, 10]])
_outputs, _final = _encoder(_src, torch.tensor([4, 4]))
assert _outputs.shape == (2, 4, 10), (
    "outputs should be (B, S, 2H) = (2, 4, 10), "
    f"got {tuple(_outputs.shape)}")
assert _final.shape == (2, 10), (
    f"final should be (B, 2H) = (2, 10), got {tuple(_final.shape)}")
# With no padding, final = [forward output at the last position;
# backward output at the first].
assert_close(_final[:, :5], _outputs[:, -1, :5])
assert_close(_final[:, 5:], _outputs[:, 0, 5:])

# %% nbgrader={"grade": true, "grade_id": "test-encoder-padding", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-encoder-padding")
### END HIDDEN TESTS
_src = torch.tensor([[3, 4, 5, 6], [7, 8, 0, 0]])  # second row: length 2
_outputs, _final = _encoder(_src, torch.tensor([4, 2]))
assert _outputs.shape == (2, 4, 10), "outputs keep the padded length S"
assert _outputs[1, 2:].eq(0).all(), (
    "outputs must be zero at padded positions")
_alone_outputs, _alone_final = _encoder(_src[1:, :2], torch.tensor([2]))
assert_close(_outputs[1, :2], _alone_outputs[0],
             msg="a padded row must give the same states as the "
                 "sequence run alone")
assert_close(_final[1], _alone_final[0],
             msg="a padded row must give the same final state as the "
                 "sequence run alone")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Additive attention (3 points)
#
# `BahdanauAttention(query_dim, key_dim, hidden_dim)` holds
# `self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)`,
# `self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)` and
# `self.v = nn.Linear(hidden_dim, 1, bias=False)`.
# `forward(query, keys, mask=None)` takes `query` `(B, Dq)`, `keys` `(B, S, Dk)` and an
# optional `mask` `(B, S)` (`torch.bool`, **True = this key may be attended**) and returns
# `context` `(B, Dk)` and `weights` `(B, S)`:
#
# $$e_{j} = v^\top \tanh(W_q q + W_k k_j), \qquad a = \operatorname{softmax}(e), \qquad
#   c = \sum_j a_j k_j$$
#
# Shapes on the way, with $d_a$ = `hidden_dim` (the decoder's `attn_dim`): `W_q(query)`
# is `(B, d_a)` — unsqueeze it to `(B, 1, d_a)` so that it broadcasts against
# `W_k(keys)` `(B, S, d_a)`; `v(...)` gives `(B, S, 1)`; squeeze the **last** dimension
# only. Masked keys must get weight **exactly 0** (fill their scores
# with $-\infty$ before the softmax), and a row with **no** key to attend gets all-zero
# weights and a zero context — never `NaN`. The context is a batched matrix product of
# the weights `(B, 1, S)` with the keys `(B, S, Dk)`.

# %% nbgrader={"grade": false, "grade_id": "bahdanau-attention", "locked": false, "schema_version": 3, "solution": true}
class BahdanauAttention(nn.Module):
    """Additive attention: score_j = v(tanh(W_q query + W_k keys[:, j])).

    forward(query (B, Dq), keys (B, S, Dk), mask (B, S) bool or None)
    -> context (B, Dk), weights (B, S).
    """

    def __init__(self, query_dim: int, key_dim: int, hidden_dim: int):
        super().__init__()
        ### BEGIN SOLUTION
        self.W_q = nn.Linear(query_dim, hidden_dim, bias=False)
        self.W_k = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)
        ### END SOLUTION

    def forward(self, query: torch.Tensor, keys: torch.Tensor,
                mask: torch.Tensor | None = None):
        ### BEGIN SOLUTION
        # (B, 1, d_a) + (B, S, d_a) -> (B, S, d_a)
        hidden = torch.tanh(self.W_q(query).unsqueeze(1) + self.W_k(keys))
        scores = self.v(hidden).squeeze(-1)                     # (B, S)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))
            # A row with nothing to attend: no -inf left, so no NaN;
            # its weights are zeroed below.
            empty = ~mask.any(dim=-1, keepdim=True)             # (B, 1)
            scores = scores.masked_fill(empty, 0.0)
        weights = torch.softmax(scores, dim=-1)                 # (B, S)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        # (B, 1, S) @ (B, S, Dk) -> (B, 1, Dk) -> (B, Dk)
        context = torch.bmm(weights.unsqueeze(1), keys).squeeze(1)
        return context, weights
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-attention", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-attention")
### END HIDDEN TESTS
_attention = BahdanauAttention(query_dim=2, key_dim=3, hidden_dim=1)
with torch.no_grad():          # score_j = tanh(first entry of key j)
    _attention.W_q.weight.zero_()
    _attention.W_k.weight.copy_(torch.tensor([[1.0, 0.0, 0.0]]))
    _attention.v.weight.fill_(1.0)
_keys = torch.tensor([[[1.0, 2.0, 3.0], [0.0, 1.0, 0.0], [-1.0, 0.0, 5.0]]])
_context, _weights = _attention(torch.tensor([[7.0, -7.0]]), _keys)
_expected = torch.softmax(
    torch.tanh(torch.tensor([[1.0, 0.0, -1.0]])), dim=-1)
assert _weights.shape == (1, 3) and _context.shape == (1, 3)
assert_close(_weights, _expected)
assert_close(_context, _expected @ _keys[0])

# %% nbgrader={"grade": true, "grade_id": "test-attention-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-attention-mask")
### END HIDDEN TESTS
_mask = torch.tensor([[True, True, False]])
_context, _weights = _attention(torch.tensor([[7.0, -7.0]]), _keys, _mask)
assert _weights[0, 2] == 0, "a masked key must get weight exactly 0"
assert_close(_weights[0, :2],
             torch.softmax(torch.tanh(torch.tensor([1.0, 0.0])), dim=-1))
_context, _weights = _attention(torch.zeros(1, 2), _keys,
                                torch.zeros(1, 3, dtype=torch.bool))
assert not _weights.isnan().any(), (
    "a row with nothing to attend must not give NaN")
assert _weights.eq(0).all() and _context.eq(0).all(), \
    "a row with nothing to attend gets zero weights and a zero context"

# %% [markdown] nbgrader={"grade": false, "grade_id": "part3", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · The decoder (3 points)
#
# `Decoder(vocab_size, emb_dim, enc_dim, hidden_dim, attn_dim, pad_id=0)` holds
#
# * `self.embedding = nn.Embedding(vocab_size, emb_dim, padding_idx=pad_id)`,
# * `self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)`,
# * `self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)`,
# * `self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)`.
#
# **`step(y_prev, s_prev, enc_outputs, src_mask)`** computes one output step, in this
# order (shapes with `enc_dim` $= 2H$):
#
# | | computes | with | shape |
# | --- | --- | --- | --- |
# | 1 | $e = E\,y_{i-1}$, the previous token's embedding | `self.embedding` | `(B, emb_dim)` |
# | 2 | $c_i, a_i$ — the query is the **previous** state $s_{i-1}$, the keys the encoder outputs | `self.attention` | `(B, 2H)`, `(B, S)` |
# | 3 | $s_i = \mathrm{GRU}([e; c_i], s_{i-1})$ | `self.rnn` | `(B, d_s)` |
# | 4 | the next token's scores from $[s_i; c_i; e]$ | `self.out` | `(B, V)` |
#
# and returns `(logits, s, a)`.
#
# **`forward(tgt_in, s0, enc_outputs, src_mask)`** runs `step` over the target with
# **teacher forcing**: step $t$ reads the *correct* previous token `tgt_in[:, t]` (not
# the model's own prediction) and the state the previous step returned (`s0` first). It
# stacks the steps' logits into `(B, T, V)` and their weights into `(B, T, S)`. Calling
# `self.step` is simplest: the hidden tests then check `forward` on its own, with a
# stand-in `step`, so a mistake in `step` costs only `step`'s points. Doing the steps'
# work yourself (embedding all of `tgt_in` at once, say) is fine too when it is right.

# %% nbgrader={"grade": false, "grade_id": "decoder", "locked": false, "schema_version": 3, "solution": true}
class Decoder(nn.Module):
    """GRU-cell decoder with additive attention over the encoder outputs.

    step(y_prev (B,), s_prev (B, d_s), enc_outputs (B, S, 2H),
         src_mask (B, S))
    -> logits (B, V), s (B, d_s), weights (B, S).
    forward(tgt_in (B, T), s0 (B, d_s), enc_outputs, src_mask)
    -> logits (B, T, V), weights (B, T, S).
    """

    def __init__(self, vocab_size: int, emb_dim: int, enc_dim: int,
                 hidden_dim: int, attn_dim: int, pad_id: int = 0):
        super().__init__()
        ### BEGIN SOLUTION
        self.embedding = nn.Embedding(vocab_size, emb_dim,
                                      padding_idx=pad_id)
        self.attention = BahdanauAttention(hidden_dim, enc_dim, attn_dim)
        self.rnn = nn.GRUCell(emb_dim + enc_dim, hidden_dim)
        self.out = nn.Linear(hidden_dim + enc_dim + emb_dim, vocab_size)
        ### END SOLUTION

    def step(self, y_prev: torch.Tensor, s_prev: torch.Tensor,
             enc_outputs: torch.Tensor, src_mask: torch.Tensor):
        ### BEGIN SOLUTION
        e = self.embedding(y_prev)                        # (B, emb_dim)
        # c (B, 2H), a (B, S)
        c, a = self.attention(s_prev, enc_outputs, src_mask)
        s = self.rnn(torch.cat([e, c], dim=-1), s_prev)   # (B, d_s)
        logits = self.out(torch.cat([s, c, e], dim=-1))   # (B, V)
        return logits, s, a
        ### END SOLUTION

    def forward(self, tgt_in: torch.Tensor, s0: torch.Tensor,
                enc_outputs: torch.Tensor, src_mask: torch.Tensor):
        ### BEGIN SOLUTION
        s, all_logits, all_weights = s0, [], []
        for t in range(tgt_in.shape[1]):
            logits, s, a = self.step(tgt_in[:, t], s, enc_outputs, src_mask)
            all_logits.append(logits)
            all_weights.append(a)
        return (torch.stack(all_logits, dim=1),
                torch.stack(all_weights, dim=1))
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-decoder-step", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-decoder-step")
### END HIDDEN TESTS
_decoder = Decoder(vocab_size=9, emb_dim=3, enc_dim=4, hidden_dim=5,
                   attn_dim=2)
_enc_outputs = torch.randn(2, 6, 4)
_mask = torch.ones(2, 6, dtype=torch.bool)
_s_prev = torch.randn(2, 5)
_logits, _s, _a = _decoder.step(torch.tensor([1, 4]), _s_prev,
                                _enc_outputs, _mask)
assert _logits.shape == (2, 9) and _s.shape == (2, 5) and _a.shape == (2, 6)


# The weights step returns are the attention's, asked with the previous
# state s_prev.
_, _expected_weights = _decoder.attention(_s_prev, _enc_outputs, _mask)
assert_close(_a, _expected_weights,
             msg="the attention's query must be the previous state s_prev")

# %% nbgrader={"grade": true, "grade_id": "test-decoder-forward", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-decoder-forward")
### END HIDDEN TESTS
_decoder = Decoder(vocab_size=9, emb_dim=3, enc_dim=4, hidden_dim=5,
                   attn_dim=2)
_tgt_in = torch.tensor([[1, 5, 6], [1, 7, 0]])
_logits, _weights = _decoder(_tgt_in, torch.zeros(2, 5), _enc_outputs,
                             _mask)
assert _logits.shape == (2, 3, 9), (
    "logits should be (B, T, V) = (2, 3, 9), "
    f"got {tuple(_logits.shape)}")
assert _weights.shape == (2, 3, 6), (
    "weights should be (B, T, S) = (2, 3, 6), "
    f"got {tuple(_weights.shape)}")
_first, _, _ = _decoder.step(_tgt_in[:, 0], torch.zeros(2, 5),
                             _enc_outputs, _mask)
assert_close(_logits[:, 0], _first,
             msg="the first step reads tgt_in[:, 0] and s0")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part4", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · The whole model, and greedy decoding (5 points)
#
# `Seq2Seq(src_vocab, tgt_vocab, emb_dim, enc_hidden, dec_hidden, attn_dim, pad_id=0)`
# holds `self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)`,
# `self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)` and
# `self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden, dec_hidden, attn_dim, pad_id)`.
#
# **`encode(src, src_lengths)`**, a helper the two methods below share, runs the encoder
# and prepares what the decoder needs. **`forward(src, src_lengths, tgt_in)`** encodes
# the source, starts the decoder from
# `s0 = tanh(self.bridge(final))` `(B, d_s)` with the mask `src_mask[b, j] = j <
# src_lengths[b]` `(B, S)`, and returns `self.decoder(tgt_in, s0, outputs, src_mask)`:
# logits `(B, T, V)` and weights `(B, T, S)`.
#
# **`greedy_decode(src, src_lengths, bos_id, eos_id, max_len)`** translates without a
# target: start every row from `bos_id`, and at each step call `self.decoder.step`, take
# the most likely token (`argmax`) and feed it back as the next `y_prev`. It returns
# `tokens` `(B, L)` `torch.long` and `weights` `(B, L, S)`, where
#
# * `tokens` do not include `bos_id`; $L \le$ `max_len`;
# * a row keeps its first `eos_id`, and every later position of that row is the model's
#   `pad_id` (other rows may still be writing);
# * decoding **stops as soon as every row has emitted `eos_id`** (or after `max_len`
#   steps) — so a batch that is done after 3 steps has $L = 3$;
# * the weights after a row's `eos_id` can be anything.
#
# Keep a boolean `done` `(B,)` of the rows that have finished. Decoding needs no
# gradients: the test calls it as it is, you may wrap it in `torch.no_grad()`.

# %% nbgrader={"grade": false, "grade_id": "seq2seq", "locked": false, "schema_version": 3, "solution": true}
class Seq2Seq(nn.Module):
    """Encoder, bridge and attention decoder.

    forward(src (B, S), src_lengths (B,), tgt_in (B, T))
    -> logits (B, T, V), weights (B, T, S).
    greedy_decode(src, src_lengths, bos_id, eos_id, max_len)
    -> tokens (B, L) long, weights (B, L, S).
    """

    def __init__(self, src_vocab: int, tgt_vocab: int, emb_dim: int,
                 enc_hidden: int, dec_hidden: int, attn_dim: int,
                 pad_id: int = 0):
        super().__init__()
        ### BEGIN SOLUTION
        self.pad_id = pad_id
        self.encoder = Encoder(src_vocab, emb_dim, enc_hidden, pad_id)
        self.bridge = nn.Linear(2 * enc_hidden, dec_hidden)
        self.decoder = Decoder(tgt_vocab, emb_dim, 2 * enc_hidden,
                               dec_hidden, attn_dim, pad_id)
        ### END SOLUTION

    def encode(self, src: torch.Tensor, src_lengths: torch.Tensor):
        """What forward and greedy_decode share: encode the source and
        start the decoder.

        -> encoder outputs (B, S, 2H), s0 = tanh(bridge(final)) (B, d_s),
           src_mask (B, S).
        """
        ### BEGIN SOLUTION
        outputs, final = self.encoder(src, src_lengths)
        s0 = torch.tanh(self.bridge(final))
        positions = torch.arange(src.shape[1], device=src.device)  # (S,)
        # (1, S) < (B, 1) -> (B, S)
        src_mask = positions.unsqueeze(0) < src_lengths.unsqueeze(1)
        return outputs, s0, src_mask
        ### END SOLUTION

    def forward(self, src: torch.Tensor, src_lengths: torch.Tensor,
                tgt_in: torch.Tensor):
        ### BEGIN SOLUTION
        outputs, s0, src_mask = self.encode(src, src_lengths)
        return self.decoder(tgt_in, s0, outputs, src_mask)
        ### END SOLUTION

    def greedy_decode(self, src: torch.Tensor, src_lengths: torch.Tensor,
                      bos_id: int, eos_id: int, max_len: int):
        ### BEGIN SOLUTION
        outputs, s, src_mask = self.encode(src, src_lengths)
        B = src.shape[0]
        y = torch.full((B,), bos_id, dtype=torch.long, device=src.device)
        done = torch.zeros(B, dtype=torch.bool, device=src.device)
        tokens, weights = [], []
        for _ in range(max_len):
            logits, s, a = self.decoder.step(y, s, outputs, src_mask)
            y = logits.argmax(dim=-1)                           # (B,)
            # Rows that are already done get pad_id.
            tokens.append(y.masked_fill(done, self.pad_id))
            weights.append(a)
            done = done | (y == eos_id)
            if done.all():
                break
        if not tokens:                                      # max_len == 0
            return (src.new_zeros(B, 0),
                    outputs.new_zeros(B, 0, src.shape[1]))
        return torch.stack(tokens, dim=1), torch.stack(weights, dim=1)
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-seq2seq-forward", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-seq2seq-forward")
### END HIDDEN TESTS
_model = Seq2Seq(src_vocab=12, tgt_vocab=9, emb_dim=3, enc_hidden=4,
                 dec_hidden=5, attn_dim=2)
_src, _lengths = torch.tensor([[3, 4, 5], [6, 0, 0]]), torch.tensor([3, 1])
_logits, _weights = _model(_src, _lengths, torch.tensor([[1, 5], [1, 6]]))
assert _logits.shape == (2, 2, 9) and _weights.shape == (2, 2, 3)
assert _weights[1, :, 1:].eq(0).all(), (
    "padded source positions get no attention")
assert_close(_weights.sum(-1), torch.ones(2, 2))

# %% nbgrader={"grade": true, "grade_id": "test-seq2seq-end-to-end", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-seq2seq-end-to-end")
### END HIDDEN TESTS
_logits.sum().backward()
for _name, _parameter in _model.named_parameters():
    assert _parameter.grad is not None, f"no gradient reaches {_name}"

# %% nbgrader={"grade": true, "grade_id": "test-greedy-decode", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-greedy-decode")
### END HIDDEN TESTS
_tokens, _weights = _model.greedy_decode(_src, _lengths, bos_id=1,
                                         eos_id=2, max_len=6)
assert (_tokens.dtype == torch.long and _tokens.shape[0] == 2
        and _tokens.shape[1] <= 6)
assert _weights.shape == (2, _tokens.shape[1], 3)
with torch.no_grad():           # a model that always writes eos first
    _model.decoder.out.bias[2] = 1e4
_tokens, _weights = _model.greedy_decode(_src, _lengths, bos_id=1,
                                         eos_id=2, max_len=6)
assert _tokens.tolist() == [[2], [2]], (
    "every row wrote eos at once: expected [[2], [2]] "
    f"(no bos, one step), got {_tokens.tolist()}")

# %% nbgrader={"grade": true, "grade_id": "test-greedy-end-to-end", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-greedy-end-to-end")
### END HIDDEN TESTS
_model = Seq2Seq(src_vocab=12, tgt_vocab=9, emb_dim=3, enc_hidden=4,
                 dec_hidden=5, attn_dim=2)
_tokens, _ = _model.greedy_decode(_src, _lengths, bos_id=1, eos_id=2,
                                  max_len=4)
_logits, _ = _model(_src, _lengths,
                    torch.cat([torch.ones(2, 1, dtype=torch.long),
                               _tokens[:, :-1]], 1))
# True at the positions after a row's first eos
_finished = (_tokens == 2).cumsum(1) - (_tokens == 2).long() > 0
assert_close(_logits.argmax(-1)[~_finished], _tokens[~_finished],
             msg="greedy tokens must be the argmax of the model fed its "
                 "own tokens")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part5", "locked": true, "schema_version": 3, "solution": false}
# ## Part 5 · The loss (2 points)
#
# `sequence_loss(logits, targets, pad_id=0)` takes `logits` `(B, T, V)` and `targets`
# `(B, T)` and returns the **mean token cross-entropy over the positions whose target is
# not `pad_id`**:
#
# $$\mathcal{L} = -\frac{1}{N} \sum_{(b, t):\, y_{bt} \ne \text{pad}}
#   \log \operatorname{softmax}(\text{logits}_{bt})_{y_{bt}}$$
#
# with $N$ the number of such positions. The classic mistake is to average over the
# padding too: a batch of short targets then looks better than it is, and the gradient
# pushes the model to predict padding. `F.cross_entropy` takes `(N, V)` logits and `(N,)`
# targets — reshape — and has an argument for exactly this.

# %% nbgrader={"grade": false, "grade_id": "sequence-loss", "locked": false, "schema_version": 3, "solution": true}
def sequence_loss(logits: torch.Tensor, targets: torch.Tensor,
                  pad_id: int = 0) -> torch.Tensor:
    """Mean cross-entropy over non-padding targets:
    logits (B, T, V), targets (B, T) -> ()."""
    ### BEGIN SOLUTION
    return F.cross_entropy(logits.reshape(-1, logits.shape[-1]),
                           targets.reshape(-1), ignore_index=pad_id)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-sequence-loss", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-sequence-loss")
### END HIDDEN TESTS
_logits = torch.randn(2, 3, 5)
_targets = torch.tensor([[3, 4, 2], [4, 2, 0]])
_loss = sequence_loss(_logits, _targets)
assert _loss.shape == (), "the loss is a scalar"
_changed = _logits.clone()
_changed[1, 2] += 100.0                     # logits at a padded position
assert_close(sequence_loss(_changed, _targets), _loss,
             msg="padded positions must not count")
_real = _targets != 0
assert_close(_loss, F.cross_entropy(_logits[_real], _targets[_real]))

# %% [markdown] nbgrader={"grade": false, "grade_id": "part6", "locked": true, "schema_version": 3, "solution": false}
# ## Part 6 · Training (4 points)
#
# `train_epoch(model, optimizer, batches, pad_id=0, clip=1.0)` makes one pass over
# `batches` (an iterable of `Batch`) and returns the **mean of the batches' losses** as a
# Python `float`. For every batch, in this order:
#
# 1. `optimizer.zero_grad()`;
# 2. `logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)` (teacher forcing);
# 3. `loss = sequence_loss(logits, batch.tgt_out, pad_id)` — call your `sequence_loss`
#    by that name: the hidden test then gives it a stand-in loss, to grade the loop on its
#    own (a loop that computes the loss itself is graded with the real loss instead);
# 4. `loss.backward()`;
# 5. `torch.nn.utils.clip_grad_norm_(model.parameters(), clip)` — RNNs now and then get
#    huge gradients; clipping their norm keeps one bad batch from wrecking the model;
# 6. `optimizer.step()`.
#
# Put the model in training mode first (`model.train()`). Record `loss.item()`, not the
# tensor: keeping the tensors keeps every batch's graph alive.
#
# The last graded test trains **your** model with **your** loop — 2 epochs on 800
# German numbers, from fixed starting weights — and checks the loss on held-out numbers.

# %% nbgrader={"grade": false, "grade_id": "train-epoch", "locked": false, "schema_version": 3, "solution": true}
def train_epoch(model: nn.Module, optimizer: torch.optim.Optimizer,
                batches, pad_id: int = 0, clip: float = 1.0) -> float:
    """One epoch of teacher-forced training; returns the mean batch loss."""
    ### BEGIN SOLUTION
    model.train()
    losses = []
    for batch in batches:
        optimizer.zero_grad()
        logits, _ = model(batch.src, batch.src_lengths, batch.tgt_in)
        loss = sequence_loss(logits, batch.tgt_out, pad_id)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), clip)
        optimizer.step()
        losses.append(loss.item())
    return sum(losses) / len(losses)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-train-epoch", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-train-epoch")
### END HIDDEN TESTS
torch.manual_seed(0)
_model = Seq2Seq(len(src_vocab), len(tgt_vocab), emb_dim=8, enc_hidden=8,
                 dec_hidden=8, attn_dim=8)
_optimizer = torch.optim.Adam(_model.parameters(), lr=0.01)
_batches = list(data.batches(train_pairs[:64], src_vocab, tgt_vocab,
                             batch_size=16, seed=0))
_before = [p.detach().clone() for p in _model.parameters()]
_first = train_epoch(_model, _optimizer, _batches)
assert isinstance(_first, float), "train_epoch returns a Python float"
assert any(not torch.equal(a, p)
           for a, p in zip(_before, _model.parameters(), strict=True)), (
    "train_epoch must update the parameters")
_second = train_epoch(_model, _optimizer, _batches)
assert _second < _first, (
    "the loss should go down on the same batches: "
    f"{_first:.3f} -> {_second:.3f}")

# %% [markdown] nbgrader={"grade": false, "grade_id": "train-intro", "locked": true, "schema_version": 3, "solution": false}
# ### Train your translator
#
# The cell below trains your model for three passes over the training numbers (about
# half a minute on a laptop CPU), then measures **exact match** — the share of held-out
# numbers whose digits come out exactly right — with your `greedy_decode`. A correct
# implementation reaches well over 95%. (This cell is not graded and is skipped when
# grading; the test cell after it trains a smaller run of its own.)

# %% tags=["demo"] nbgrader={"grade": false, "grade_id": "train-demo", "locked": true, "schema_version": 3, "solution": false}
from tqdm import tqdm

torch.manual_seed(0)
model = Seq2Seq(len(src_vocab), len(tgt_vocab), emb_dim=16, enc_hidden=32,
                dec_hidden=32, attn_dim=32)
optimizer = torch.optim.Adam(model.parameters(), lr=0.01)
history = []
for epoch in tqdm(range(3), desc="epochs"):
    history.append(train_epoch(
        model, optimizer,
        data.batches(train_pairs, src_vocab, tgt_vocab, 64, seed=epoch)))

model.eval()
held_out = data.make_batch(test_pairs, src_vocab, tgt_vocab)
with torch.no_grad():
    tokens, weights = model.greedy_decode(
        held_out.src, held_out.src_lengths, tgt_vocab.bos_id,
        tgt_vocab.eos_id, max_len=8)
right = [tgt_vocab.decode(row.tolist()) == target
         for row, (_, target) in zip(tokens, test_pairs, strict=True)]
print(f"mean training loss per epoch: {[round(h, 3) for h in history]}")
print(f"exact match on {len(test_pairs)} held-out numbers: "
      f"{sum(right) / len(right):.1%}")

# %% [markdown] nbgrader={"grade": false, "grade_id": "alignment-intro", "locked": true, "schema_version": 3, "solution": false}
# ### Look at your model's alignments
#
# Each row is an output digit, each column a source word piece; a dark cell means the
# decoder looked there while writing that digit. In *sieben tausend vier hundert drei und
# achtzig* (7483) the tens digit 8 should look at *achtzig* and the units digit 3 at
# *drei*, which comes **before** it: the alignment crosses.

# %% tags=["demo"] nbgrader={"grade": false, "grade_id": "alignment-demo", "locked": true, "schema_version": 3, "solution": false}
fig, axes = plt.subplots(1, 2, figsize=(11, 4))
for ax, number in zip(axes, [7483, 2019], strict=True):
    source, target = pairs[number]
    one = data.make_batch([pairs[number]], src_vocab, tgt_vocab)
    with torch.no_grad():
        tokens, weights = model.greedy_decode(
            one.src, one.src_lengths, tgt_vocab.bos_id, tgt_vocab.eos_id,
            max_len=8)
    written = tgt_vocab.decode(tokens[0].tolist()) + ["<eos>"]
    data.show_alignment(weights[0, :len(written)], source, written,
                        title=f"{number}: {' '.join(source)}", ax=ax)
fig.tight_layout()
plt.show()

# %% tags=["long"] nbgrader={"grade": true, "grade_id": "test-training", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-training")
### END HIDDEN TESTS
torch.manual_seed(0)
_model = Seq2Seq(len(src_vocab), len(tgt_vocab), emb_dim=8, enc_hidden=8,
                 dec_hidden=8, attn_dim=8)
_optimizer = torch.optim.Adam(_model.parameters(), lr=0.02)
_few = list(data.batches(train_pairs[:96], src_vocab, tgt_vocab,
                         batch_size=16, seed=0))
_losses = [train_epoch(_model, _optimizer, _few) for _ in range(2)]
assert _losses[1] < 0.95 * _losses[0], (
    f"a second epoch on the same numbers should cut the loss: {_losses}")
# The hidden test trains a fresh Seq2Seq (your class, fixed starting
# weights) with your train_epoch for 2 epochs on 800 numbers; the loss on
# held-out numbers must end up low.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-intro", "locked": true, "schema_version": 3, "solution": false}
# ## Written questions (4 points, graded by hand)
#
# Answer each question in the cell below it, in a few sentences of your own (an equation or a
# number where it helps). These answers are read and graded by a person, after the tests have
# graded your code: your feedback shows them as *awaiting a grade* until then.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-crossing-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 1 (2 points).** Run the alignment cell above and read your own heatmap for
# 7483, *sieben tausend vier hundert drei und achtzig*. Which source word does the decoder look at
# while it writes the digit 8, and which while it writes 3? What does this crossing show that an
# alignment moving left to right through the source could not do? (If your model got this number
# wrong, say what it attended to instead.)

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-crossing", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** Writing 8 (the tens) it looks mostly at *achtzig*; writing 3 (the units) at *drei*,
# which stands **before** *achtzig* in the source though 3 comes after 8 in the output: German
# says the units before the tens (*dreiundachtzig*). The alignment is not monotonic: at each
# step the decoder's query picks the source position by content, wherever it is. An alignment
# that can only move left to right would reach *drei* before *achtzig* and could not write
# 8 then 3 from the right words.
#
# **Rubric (2 points).** 1 point for an honest reading of the student's own heatmap (the expected one, or what
# their model did, described correctly). 1 point for the explanation: units before tens in
# German, so the alignment crosses; attention chooses positions by content, not by order.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-padding-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 2 (2 points).** Suppose the model were trained on the same source words, but
# with the digits written in reverse order: 7483 becomes 3 8 4 7. Predict its attention
# heatmap for *sieben tausend vier hundert drei und achtzig*: which source word would the
# decoder read for each output digit, in order? Where does this alignment cross, compared with
# yours? Would the model with attention find this task harder than the original? Explain from
# how attention chooses a source position.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-padding", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** 3 from *drei*, 8 from *achtzig*, 4 from *vier*, 7 from *sieben*: source
# positions 5, 7, 3 and 1 of the seven words. The pair that crossed in the original model (the
# tens written before the units, read in the other order) now follows the source order, and
# every later step jumps back to the left instead. For attention the order makes no
# difference: at every step the decoder's query selects source positions by their content,
# wherever they are, so this task is no harder than the original; the decoder must still know
# which digit comes next.
#
# **Rubric (2 points).** 1 point for the predicted alignment (*drei*, *achtzig*, *vier*,
# *sieben*, in that order) and where it crosses (the units–tens pair in source order, the other
# steps jumping left). 1 point for the reason it is not harder: attention selects positions by
# content at every step, in any order.
