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
# # Exercise: the attention module and its scoring functions
#
# An attention module turns a **query** $q$ and a set of **keys** $k_1, \dots, k_n$ into a
# weighted sum. It works in three steps:
#
# 1. **score** every key against the query, $s_i = f(q, k_i)$;
# 2. turn the scores into **weights** with a softmax, $a_i = \exp(s_i) / \sum_j \exp(s_j)$;
# 3. return the **context** $c = \sum_i a_i v_i$, where $v_i$ is the value paired with key $i$
#    (in *plain mode* the values are the keys themselves, $v_i = k_i$).
#
# In this exercise you implement the five classic scoring functions, a softmax that respects
# a mask of padded positions, and the module that puts them together — batched, in PyTorch.
#
# **What you write and what it is worth** (18 points in all: 14 for your code, graded by its tests, and 4 for
# two written answers, graded by hand; every test cell states its points):
#
# | part | function | points |
# | --- | --- | --- |
# | 1 | `dot_score` | 1 |
# | 2 | `scaled_dot_score` | 1 |
# | 3 | `general_score` | 2 |
# | 4 | `concat_score` | 2 |
# | 5 | `additive_score` | 2 |
# | 6 | `masked_softmax` (no mask · mask · fully masked row) | 1 + 1 + 1 |
# | 7 | `attend` (key–value mode · plain mode · masks and custom scores) | 1 + 1 + 1 |
# | written | two questions at the end, answered in words (graded by hand) | 2 + 2 |
#
# **How to work.** Replace each `raise NotImplementedError()` with your code; keep the function
# names and signatures. Run the test cell after each function: the *visible* tests in it check
# shapes and a small example you can verify by hand. When you submit, *hidden* tests in the
# same cells also compare your functions with reference implementations on random inputs,
# unequal dimensions, batch size 1, `float64`, masks of every length (including a row with
# nothing to attend), gradients, and check that your functions never modify their inputs.
# Do not edit or delete the test cells. Before submitting: *Kernel → Restart & Run All*.
#
# **Rules.** Do not call `torch.nn.functional.scaled_dot_product_attention`,
# `torch.nn.MultiheadAttention` or `torch.nn.functional.multi_head_attention_forward`.
# Everything else in PyTorch is allowed: `@`, `torch.bmm`, `torch.einsum`, `torch.softmax`, …

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false}
import math

import torch

torch.manual_seed(0)

# %% [markdown] nbgrader={"grade": false, "grade_id": "conventions", "locked": true, "schema_version": 3, "solution": false}
# ## Shapes and conventions
#
# Everything is **batch first**. One batch holds $B$ independent examples, each with one query
# and $n$ keys:
#
# | name | shape | meaning |
# | --- | --- | --- |
# | `query` | `(B, d_q)` | one query vector per example |
# | `keys` | `(B, n, d_k)` | $n$ key vectors per example |
# | `values` | `(B, n, d_v)` or `None` | one value per key; `None` means plain mode |
# | `scores`, `weights` | `(B, n)` | one number per key |
# | `mask` | `(B, n)`, `torch.bool` | **`True` = this key may be attended** |
# | `context` | `(B, d_v)` | the weighted sum |
#
# The concat and additive scorers of parts 4 and 5 have one more size, their hidden
# ("attention") size $d_a$: the number of rows of $W$, $W_q$ and $W_k$, written `d_a` in
# the shapes below. (The messages of your feedback call it `h`: it is this $d_a$.)
#
# Every function must
# * return **new** tensors and never modify its inputs (no in-place operations such as
#   `masked_fill_` or `/=` on an argument);
# * work for batch size 1 and $n = 1$ — beware of a bare `.squeeze()`, which also removes a
#   batch dimension of size 1; name the dimension: `.squeeze(-1)`;
# * keep the input's dtype (`float64` in, `float64` out) and let gradients flow to every
#   input and parameter (no `.item()`, `.detach()` or `torch.tensor(...)` of results).
#
# ### A worked example to check by hand
#
# Take $B = 1$, $q = (1, 0, 1)$ and three keys $k_1 = (1, 0, 1)$, $k_2 = (0, 1, 0)$,
# $k_3 = (1, 1, 1)$.
#
# * Dot scores: $q \cdot k_1 = 2$, $q \cdot k_2 = 0$, $q \cdot k_3 = 2$.
# * Softmax: $a_1 = a_3 = e^2 / (2e^2 + 1) \approx 0.4683$ and $a_2 = 1 / (2e^2 + 1) \approx 0.0634$.
# * Plain-mode context: $0.4683\,k_1 + 0.0634\,k_2 + 0.4683\,k_3 \approx (0.9366, 0.5317, 0.9366)$.
# * Scaled dot scores divide by $\sqrt{d_k} = \sqrt 3$: $(1.1547, 0, 1.1547)$.
# * If $k_3$ is padding (mask `[True, True, False]`), the weights become
#   $(e^2 / (e^2 + 1), 1 / (e^2 + 1), 0) \approx (0.8808, 0.1192, 0)$.
#
# The visible tests use exactly these numbers.

# %% nbgrader={"grade": false, "grade_id": "example-and-test-helpers", "locked": true, "schema_version": 3, "solution": false}
example_query = torch.tensor([[1.0, 0.0, 1.0]])   # (B=1, d=3)
example_keys = torch.tensor([[[1.0, 0.0, 1.0],
                              [0.0, 1.0, 0.0],
                              [1.0, 1.0, 1.0]]])  # (B=1, n=3, d=3)
example_values = torch.tensor([[[10.0],
                                [20.0],
                                [30.0]]])         # (B=1, n=3, d_v=1)


def assert_close(actual, expected, what):
    """Compare a result with the expected tensor, naming `what` in the
    failure message."""
    assert isinstance(actual, torch.Tensor), (
        f"{what}: expected a tensor, got {type(actual)}")
    assert actual.shape == expected.shape, (
        f"{what}: expected shape {tuple(expected.shape)}, "
        f"got {tuple(actual.shape)}")
    assert actual.dtype == expected.dtype, (
        f"{what}: expected dtype {expected.dtype}, got {actual.dtype}")
    assert torch.allclose(actual, expected, atol=1e-4), (
        f"{what}: expected\n{expected}\ngot\n{actual}")


# %% [markdown] nbgrader={"grade": false, "grade_id": "part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · Dot product (1 point)
#
# $$s_i = q^\top k_i \qquad (d_q = d_k)$$
#
# For the whole batch at once: `keys` `(B, n, d)` times `query` as a column `(B, d, 1)` gives
# `(B, n, 1)`; drop the last dimension. `torch.bmm`, `@` with broadcasting or `torch.einsum`
# all work.

# %% nbgrader={"grade": false, "grade_id": "dot_score", "locked": false, "schema_version": 3, "solution": true}
def dot_score(query: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
    """Dot-product scores.

    query (B, d), keys (B, n, d) -> scores (B, n)
    with scores[b, i] = query[b] . keys[b, i].
    """
    ### BEGIN SOLUTION
    # (B, n, d) @ (B, d, 1) -> (B, n, 1) -> (B, n)
    return torch.bmm(keys, query.unsqueeze(-1)).squeeze(-1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-dot-score", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-dot-score")
### END HIDDEN TESTS
assert_close(dot_score(example_query, example_keys),
             torch.tensor([[2.0, 0.0, 2.0]]),
             "dot_score on the worked example")
assert dot_score(torch.randn(4, 6), torch.randn(4, 5, 6)).shape == (4, 5)

# %% [markdown] nbgrader={"grade": false, "grade_id": "part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Scaled dot product (1 point)
#
# $$s_i = \frac{q^\top k_i}{\sqrt{d_k}}$$
#
# The dot product of two random $d_k$-dimensional vectors with unit-variance entries has
# variance $d_k$; dividing by $\sqrt{d_k}$ keeps the scores at unit scale, so the softmax does
# not saturate as the dimension grows (Vaswani et al., 2017). $d_k$ is the size of the last
# dimension of `keys` — not the number of keys $n$. You may call your `dot_score`.

# %% nbgrader={"grade": false, "grade_id": "scaled_dot_score", "locked": false, "schema_version": 3, "solution": true}
def scaled_dot_score(query: torch.Tensor,
                     keys: torch.Tensor) -> torch.Tensor:
    """Scaled dot-product scores.

    query (B, d), keys (B, n, d)
    -> scores (B, n) = (query . keys[:, i]) / sqrt(d).
    """
    ### BEGIN SOLUTION
    return dot_score(query, keys) / math.sqrt(keys.shape[-1])
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-scaled-dot-score", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-scaled-dot-score")
### END HIDDEN TESTS
assert_close(scaled_dot_score(example_query, example_keys),
             torch.tensor([[1.1547, 0.0, 1.1547]]),
             "scaled_dot_score on the worked example")
assert scaled_dot_score(torch.randn(2, 16),
                        torch.randn(2, 3, 16)).shape == (2, 3)

# %% [markdown] nbgrader={"grade": false, "grade_id": "part3", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · General (bilinear) score (2 points)
#
# $$s_i = q^\top W k_i, \qquad W \in \mathbb{R}^{d_q \times d_k}$$
#
# Luong et al. (2015) call it *general*; the lecture calls it the bilinear model (双线性模型).
# $W$ lets query and keys live in spaces of different sizes. Mind the order: $q^\top W$ is a
# row of length $d_k$ that is then dotted with every key. With a square $W$, $q^\top W^\top k_i$
# has the right shape but the wrong value.

# %% nbgrader={"grade": false, "grade_id": "general_score", "locked": false, "schema_version": 3, "solution": true}
def general_score(query: torch.Tensor, keys: torch.Tensor,
                  W: torch.Tensor) -> torch.Tensor:
    """Bilinear ("general") scores.

    query (B, d_q), keys (B, n, d_k), W (d_q, d_k)
    -> scores (B, n) = query[b]^T W keys[b, i].
    """
    ### BEGIN SOLUTION
    projected = query @ W           # (B, d_q) @ (d_q, d_k) -> (B, d_k)
    return torch.bmm(keys, projected.unsqueeze(-1)).squeeze(-1)   # (B, n)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-general-score", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-general-score")
### END HIDDEN TESTS
assert_close(general_score(example_query, example_keys, torch.eye(3)),
             torch.tensor([[2.0, 0.0, 2.0]]),
             "general_score with W = I (equals the dot score)")
assert general_score(torch.randn(2, 3), torch.randn(2, 4, 5),
                     torch.randn(3, 5)).shape == (2, 4), (
    "general_score must accept d_q != d_k: "
    "query (2, 3), keys (2, 4, 5), W (3, 5) -> (2, 4)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part4", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · Concat score (2 points)
#
# $$s_i = v^\top \tanh\!\big(W [q; k_i]\big), \qquad W \in \mathbb{R}^{d_a \times (d_q + d_k)},\;
#   v \in \mathbb{R}^{d_a}$$
#
# $[q; k_i]$ stacks the query **first**, then the key, into one vector of length $d_q + d_k$
# (Luong et al., 2015, *concat*). To do it for all keys at once, repeat the query $n$ times
# (`unsqueeze` + `expand`) so it can be concatenated with `keys` along the last dimension.
# The $\tanh$ matters: without it the query's contribution $W_q q$ would be the same for
# every key and would cancel in the softmax (see the chapter's notebook).

# %% nbgrader={"grade": false, "grade_id": "concat_score", "locked": false, "schema_version": 3, "solution": true}
def concat_score(query: torch.Tensor, keys: torch.Tensor, W: torch.Tensor,
                 v: torch.Tensor) -> torch.Tensor:
    """Concat scores.

    query (B, d_q), keys (B, n, d_k), W (d_a, d_q + d_k), v (d_a,)
    -> scores (B, n) = v^T tanh(W [query[b]; keys[b, i]]).
    """
    ### BEGIN SOLUTION
    n = keys.shape[1]
    repeated = query.unsqueeze(1).expand(-1, n, -1)     # (B, n, d_q)
    pairs = torch.cat([repeated, keys], dim=-1)         # (B, n, d_q + d_k)
    # (B, n, d_a) @ (d_a,) -> (B, n)
    return torch.tanh(pairs @ W.T) @ v
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-concat-score", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-concat-score")
### END HIDDEN TESTS
_W, _v = torch.zeros(2, 6), torch.tensor([1.0, 0.0])
_W[0, 3:] = 1.0        # the first hidden unit sums the key's entries
assert_close(concat_score(example_query, example_keys, _W, _v),
             torch.tanh(torch.tensor([[2.0, 1.0, 3.0]])),
             "concat_score with W picking the key's sum")
assert concat_score(torch.randn(2, 3), torch.randn(2, 4, 5),
                    torch.randn(7, 8), torch.randn(7)).shape == (2, 4)

# %% [markdown] nbgrader={"grade": false, "grade_id": "part5", "locked": true, "schema_version": 3, "solution": false}
# ## Part 5 · Additive score (2 points)
#
# $$s_i = v^\top \tanh(W_q q + W_k k_i), \qquad W_q \in \mathbb{R}^{d_a \times d_q},\;
#   W_k \in \mathbb{R}^{d_a \times d_k},\; v \in \mathbb{R}^{d_a}$$
#
# This is Bahdanau et al.'s (2015) score, the lecture's additive model (加性模型). It equals the
# concat score with $W = [W_q\; W_k]$, but projecting the query once and the keys once is
# cheaper: $W_q q$ is `(B, d_a)`, $W_k k_i$ for all keys is `(B, n, d_a)`; add them with
# broadcasting, apply $\tanh$, then dot with $v$.

# %% nbgrader={"grade": false, "grade_id": "additive_score", "locked": false, "schema_version": 3, "solution": true}
def additive_score(query: torch.Tensor, keys: torch.Tensor,
                   W_q: torch.Tensor, W_k: torch.Tensor,
                   v: torch.Tensor) -> torch.Tensor:
    """Additive (Bahdanau) scores.

    query (B, d_q), keys (B, n, d_k), W_q (d_a, d_q), W_k (d_a, d_k),
    v (d_a,) -> scores (B, n) = v^T tanh(W_q query[b] + W_k keys[b, i]).
    """
    ### BEGIN SOLUTION
    projected_query = (query @ W_q.T).unsqueeze(1)            # (B, 1, d_a)
    projected_keys = keys @ W_k.T                             # (B, n, d_a)
    return torch.tanh(projected_query + projected_keys) @ v   # (B, n)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-additive-score", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-additive-score")
### END HIDDEN TESTS
_W_q, _W_k = torch.zeros(2, 3), torch.zeros(2, 3)
_v = torch.tensor([1.0, 0.0])
_W_k[0] = 1.0          # the first hidden unit sums the key's entries
assert_close(additive_score(example_query, example_keys, _W_q, _W_k, _v),
             torch.tanh(torch.tensor([[2.0, 1.0, 3.0]])),
             "additive_score with W_k picking the key's sum")
assert additive_score(torch.randn(2, 3), torch.randn(2, 4, 5),
                      torch.randn(7, 3), torch.randn(7, 5),
                      torch.randn(7)).shape == (2, 4)

# %% [markdown] nbgrader={"grade": false, "grade_id": "part6", "locked": true, "schema_version": 3, "solution": false}
# ## Part 6 · Softmax with a mask (3 points)
#
# $$a_i = \frac{m_i \exp(s_i)}{\sum_j m_j \exp(s_j)}, \qquad m_i = 1 \text{ if key } i
#   \text{ may be attended, else } 0$$
#
# Sequences in a batch have different lengths, so shorter ones are padded and the padded keys
# must get weight **exactly 0**. Your `masked_softmax(scores, mask=None)` takes scores `(B, n)`
# and an optional boolean mask `(B, n)` (`True` = may be attended) and returns weights
# `(B, n)`:
#
# * without a mask, an ordinary softmax over the **last** dimension (each row sums to 1);
# * with a mask, weight 0 on every masked key and the rest renormalised to sum to 1 — filling
#   masked scores with $-\infty$ before the softmax does this; zeroing weights *after* an
#   ordinary softmax does not (the row no longer sums to 1);
# * a row whose keys are **all** masked has nothing to attend: return all-zero weights for it,
#   never `NaN` (a softmax over a row of $-\infty$ is $0/0$);
# * it must stay finite for large scores (say 100 or 1000): subtract the row maximum before
#   `exp`, or use `torch.softmax`, which does.

# %% nbgrader={"grade": false, "grade_id": "masked_softmax", "locked": false, "schema_version": 3, "solution": true}
def masked_softmax(scores: torch.Tensor,
                   mask: torch.Tensor | None = None) -> torch.Tensor:
    """Softmax over the last dimension that gives masked keys weight 0.

    scores (B, n), mask (B, n) bool or None (True = may be attended)
    -> weights (B, n).
    A row with no position left to attend gets all-zero weights.
    """
    ### BEGIN SOLUTION
    if mask is None:
        return torch.softmax(scores, dim=-1)
    # Masked keys get -inf, so exp(-inf) = 0.
    filled = scores.masked_fill(~mask, float("-inf"))
    has_any = mask.any(dim=-1, keepdim=True)                  # (B, 1)
    # Fully masked rows: 0 instead of -inf, so no NaN ...
    filled = filled.masked_fill(~has_any, 0.0)
    weights = torch.softmax(filled, dim=-1)
    return weights.masked_fill(~mask, 0.0)   # ... and zeroed afterwards
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-masked-softmax-no-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-masked-softmax-no-mask")
### END HIDDEN TESTS
assert_close(masked_softmax(torch.tensor([[2.0, 0.0, 2.0]])),
             torch.tensor([[0.4683, 0.0634, 0.4683]]),
             "masked_softmax without a mask")
_w = masked_softmax(torch.randn(4, 6))
assert _w.shape == (4, 6) and torch.allclose(_w.sum(-1), torch.ones(4)), \
    "every row of the weights must sum to 1"

# %% nbgrader={"grade": true, "grade_id": "test-masked-softmax-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-masked-softmax-mask")
### END HIDDEN TESTS
assert_close(masked_softmax(torch.tensor([[2.0, 0.0, 2.0]]),
                            torch.tensor([[True, True, False]])),
             torch.tensor([[0.8808, 0.1192, 0.0]]),
             "masked_softmax with the last key masked")
_w = masked_softmax(torch.randn(2, 4),
                    torch.tensor([[True, True, True, False],
                                  [True, False, False, False]]))
assert _w[0, 3] == 0 and _w[1, 1:].eq(0).all(), (
    "masked positions must get weight exactly 0")

# %% nbgrader={"grade": true, "grade_id": "test-masked-softmax-fully-masked", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-masked-softmax-fully-masked")
### END HIDDEN TESTS
_w = masked_softmax(torch.tensor([[1.0, 2.0], [3.0, 4.0]]),
                    torch.tensor([[True, True], [False, False]]))
assert not torch.isnan(_w).any(), (
    "a fully masked row must give zeros, not NaN")
assert_close(_w[1], torch.zeros(2), "the weights of a fully masked row")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part7", "locked": true, "schema_version": 3, "solution": false}
# ## Part 7 · The attention module (3 points)
#
# $$a = \operatorname{masked\_softmax}\big(\operatorname{score}(q, K),\, m\big), \qquad
#   c = \sum_{i=1}^{n} a_i v_i$$
#
# `attend(query, keys, values=None, score=dot_score, mask=None)` returns `(context, weights)`:
#
# * `score` is **any** callable taking `(query, keys)` and returning scores `(B, n)`; the
#   default is your `dot_score`. To use a scorer with parameters, wrap it:
#   `score=lambda q, k: general_score(q, k, W)`.
# * `values` `(B, n, d_v)` gives **key–value mode**: weigh the values. `values=None` is
#   **plain mode**: the keys are also the values, so `context` has shape `(B, d_k)`.
# * `weights` `(B, n)` come from your `masked_softmax`; `context` is `(B, d_v)`: a batched
#   matrix product of the weights `(B, 1, n)` with the values `(B, n, d_v)`. An example
#   with nothing to attend gets a zero context.

# %% nbgrader={"grade": false, "grade_id": "attend", "locked": false, "schema_version": 3, "solution": true}
def attend(query: torch.Tensor, keys: torch.Tensor,
           values: torch.Tensor | None = None, score=dot_score,
           mask: torch.Tensor | None = None
           ) -> tuple[torch.Tensor, torch.Tensor]:
    """Attention: score the keys, normalise with a (masked) softmax,
    weigh the values.

    query (B, d_q), keys (B, n, d_k),
    values (B, n, d_v) or None (plain mode: values = keys),
    score: callable (query, keys) -> (B, n), mask (B, n) bool or None
    -> context (B, d_v), weights (B, n).
    """
    ### BEGIN SOLUTION
    if values is None:
        values = keys
    weights = masked_softmax(score(query, keys), mask)              # (B, n)
    # (B, 1, n) @ (B, n, d_v) -> (B, 1, d_v) -> (B, d_v)
    context = torch.bmm(weights.unsqueeze(1), values).squeeze(1)
    return context, weights
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-attend-key-value", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-attend-key-value")
### END HIDDEN TESTS
_context, _weights = attend(example_query, example_keys, example_values)
assert_close(_weights, torch.tensor([[0.4683, 0.0634, 0.4683]]),
             "attend: weights")
assert_close(_context, torch.tensor([[20.0]]), "attend: key-value context")
assert attend(torch.randn(2, 4), torch.randn(2, 3, 4),
              torch.randn(2, 3, 7))[0].shape == (2, 7)

# %% nbgrader={"grade": true, "grade_id": "test-attend-plain", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-attend-plain")
### END HIDDEN TESTS
_context, _weights = attend(example_query, example_keys)
assert_close(_context, torch.tensor([[0.9366, 0.5317, 0.9366]]),
             "attend: plain-mode context")

# %% nbgrader={"grade": true, "grade_id": "test-attend-mask-and-score", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-attend-mask-and-score")
### END HIDDEN TESTS
_mask = torch.tensor([[True, True, False]])
_context, _weights = attend(example_query, example_keys, example_values,
                            mask=_mask)
assert_close(_weights, torch.tensor([[0.8808, 0.1192, 0.0]]),
             "attend: weights with a mask")
_context, _weights = attend(example_query, example_keys, example_values,
                            score=lambda q, k: -dot_score(q, k))
assert _weights[0, 1] > _weights[0, 0], (
    "attend must use the score function it is given")

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-intro", "locked": true, "schema_version": 3, "solution": false}
# ## Written questions (4 points, graded by hand)
#
# Answer each question in the cell below it, in a few sentences of your own (an equation or a
# number where it helps). These answers are read and graded by a person, after the tests have
# graded your code: your feedback shows them as *awaiting a grade* until then.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-scaling-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 1 (2 points).** A colleague's queries and keys are not standardised: their
# entries are independent, with mean 0 and variance $\sigma^2 = 4$, in $d_k = 64$
# dimensions. What is the variance of $q^\top k$? Your `scaled_dot_score` divides by
# $\sqrt{d_k} = 8$: what variance do the scaled scores have, and what would you divide by
# instead to bring it to 1? Predict what the softmax weights over 10 such keys look like with
# your `scaled_dot_score`, and why that matters for training.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-scaling", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** Each product $q_j k_j$ has mean 0 and variance $\sigma^2 \cdot \sigma^2 = 16$,
# so the sum of 64 of them has variance $64 \cdot 16 = 1024$ (standard deviation 32). Dividing
# by $\sqrt{d_k} = 8$ leaves variance $1024 / 64 = 16$ (standard deviation 4), and the softmax
# over 10 keys is much sharper than intended: the largest weight is about 0.74 on average,
# against about 0.32 for unit-variance scores (measured on random scores). Near one-hot
# weights have small softmax gradients $a_i(\delta_{ij} - a_j)$, so the scores learn slowly.
# Dividing by $\sigma^2 \sqrt{d_k} = 32$ brings the variance to 1: $\sqrt{d_k}$ alone is the
# right factor only for unit-variance entries.
#
# **Rubric (2 points).** 1 point for the variance $d_k \sigma^4 = 1024$ with its reason, and 16
# after dividing by 8. 1 point for the consequence (sharper, nearer one-hot weights with small
# gradients) and the factor $\sigma^2 \sqrt{d_k} = 32$.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-linear-concat-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 2 (2 points).** Run your `attend` on the worked example above (dot scores,
# plain mode), then again with the query multiplied by 10. Report both sets of weights and
# explain the change. Then predict what happens to the weights of `additive_score` as the
# query grows without bound ($W_q$, $W_k$ and $v$ fixed): can they become as sharp as the dot
# product's?

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-linear-concat", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** With $q = (1, 0, 1)$ the dot scores are $(2, 0, 2)$ and the weights
# $(0.468, 0.063, 0.468)$. With $10q$ the scores are $(20, 0, 20)$ and the weights about
# $(0.5, 10^{-9}, 0.5)$: every score is multiplied by 10, so the softmax sharpens, as if its
# temperature dropped, while keys with equal scores stay tied. A dot-product model can make its
# attention sharper just by learning longer queries. The additive score cannot:
# $|v^\top \tanh(\cdot)| \le \sum_l |v_l|$, so its scores stay bounded whatever the query.
# Moreover, as the query grows, $W_q q$ dominates $W_k k_i$, each component of
# $\tanh(W_q q + W_k k_i)$ tends to the sign of the same component of $W_q q$, the same for
# every key, and all scores tend to one value: the weights tend to uniform.
#
# **Rubric (2 points).** 1 point for the student's own numbers (scores times 10, weights about
# 0.5, 0, 0.5) and the explanation (the softmax sharpens; ties stay tied). 1 point for the
# additive score: bounded by $\sum_l |v_l|$, so it cannot sharpen without bound; the weights
# tending to uniform as every $\tanh$ saturates alike is the full answer.
