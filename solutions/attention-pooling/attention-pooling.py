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
# # Exercise: attention pooling, kernel regression and graph aggregation
#
# Part 1 of the course met attention three times, each time as a **weighted sum** whose
# weights are computed rather than fixed: the lecture's three numbers 1, 3, 4 summarised
# as 2, kernel regression (Nadaraya–Watson) with a bandwidth learned by gradient descent,
# and the lecture's four-node graph whose nodes average, then weigh, their neighbours. In
# this exercise you write each of them as a small PyTorch function.
#
# **What you write and what it is worth** (20 points in all: 16 for your code, graded by its tests, and 4
# for two written answers, graded by hand; every test cell states its points):
#
# | part | function | points |
# | --- | --- | --- |
# | 1 | `mean_pool` (no mask · mask, including a mask that keeps nothing) | 1 + 1 |
# | 2 | `kernel_weights` (ordinary bandwidths · tiny and huge ones) | 2 + 1 |
# | 3 | `nadaraya_watson` | 1 |
# | 4 | `leave_one_out_loss` | 2 |
# | 5 | `fit_bandwidth` | 2 |
# | 6 | `mean_aggregation` (without · with self-loops) | 1 + 1 |
# | 7 | `dot_attention_aggregation` (connected graphs · isolated nodes) | 2 + 1 |
# | 8 | `aggregate` | 1 |
# | written | two questions at the end, answered in words (graded by hand) | 2 + 2 |
#
# **How to work.** Replace each `raise NotImplementedError()` with your code; keep the
# function names and signatures. Run the test cell after each function: its *visible*
# tests use the lecture's own numbers, which you can check by hand. When you submit,
# *hidden* tests in the same cells also compare your functions with reference
# implementations on random inputs, `float32` and `float64`, a single key or node, tiny and
# huge bandwidths, a mask that keeps nothing, a node without neighbours, gradients with
# respect to every input and to the bandwidth, and check that your functions never modify
# their inputs. Do not edit or delete the test cells. Before submitting:
# *Kernel → Restart & Run All*.
#
# **Rules.** Do not call `torch.nn.functional.scaled_dot_product_attention`,
# `torch.nn.MultiheadAttention` or `torch.nn.functional.multi_head_attention_forward`.
# Everything else in PyTorch is allowed: `@`, `torch.softmax`, `masked_fill`,
# `torch.where`, `torch.einsum`, …

# %% nbgrader={"grade": false, "grade_id": "imports", "locked": true, "schema_version": 3, "solution": false}
import math

import torch

torch.manual_seed(0)

# %% [markdown] nbgrader={"grade": false, "grade_id": "conventions", "locked": true, "schema_version": 3, "solution": false}
# ## Shapes and conventions
#
# There is **no batch dimension** in this exercise: one set of keys at a time.
#
# | name | shape | meaning |
# | --- | --- | --- |
# | `values` (part 1) | `(n, d)` | $n$ vectors to pool |
# | `mask` | `(n,)`, `torch.bool` | **`True` = this row may be used** |
# | `queries` | `(m,)` | $m$ numbers to predict at |
# | `keys`, `values` (parts 2–5) | `(n,)` | the observations $(x_i, y_i)$ |
# | `bandwidth` | a Python `float` or a 0-dim tensor | $h > 0$ |
# | `log_bandwidth` | a 0-dim tensor | $\theta = \log h$ |
# | `adjacency` | `(N, N)`, `torch.bool` | the graph: symmetric, `False` on the diagonal |
# | `features` | `(N, M)` | one row of $M$ features per node |
# | `W` | `(M, K)` | the transformation step's weights |
#
# Every function must
# * return **new** tensors and never modify its inputs (no in-place operations such as
#   `masked_fill_`, `values[~mask] = 0` or `/=` on an argument);
# * keep the input's dtype (`float64` in, `float64` out) — except `mean_aggregation`, whose
#   input is a boolean matrix and whose output is always `float32`, and `fit_bandwidth`,
#   which returns a Python `float`;
# * let gradients flow to every floating-point input, the bandwidth included when it is a
#   tensor (no `.item()`, `float(...)`, `.detach()` or `torch.tensor(...)` of a value that
#   needs a gradient);
# * never return `NaN`: a mask that keeps nothing and a node without neighbours give zeros.
#
# ### The lecture's numbers
#
# The visible tests use the lecture's two examples. The three inputs $1, 3, 4$ that the
# lecture summarises as $2$; and its graph of $N = 4$ nodes: node 1 is linked to nodes 2,
# 3 and 4, nodes 2 and 3 to each other, with the feature matrix $\mathbf{X}$ ($M = 5$) and
# the weight matrix $\mathbf{W}$ ($K = 4$) of the slides. Node $v$ of the lecture is row
# $v - 1$ here. The tests pass your functions copies (`.clone()`) of these tensors, so
# that a function that modifies its input cannot spoil the tests after it.

# %% nbgrader={"grade": false, "grade_id": "lecture-numbers-and-test-helpers", "locked": true, "schema_version": 3, "solution": false}
lecture_inputs = torch.tensor([1.0, 3.0, 4.0])    # (3,): 1, 3, 4

lecture_A = torch.tensor([[0, 1, 1, 1],       # node 1: nodes 2, 3, 4
                          [1, 0, 1, 0],       # node 2: nodes 1, 3
                          [1, 1, 0, 0],       # node 3: nodes 1, 2
                          [1, 0, 0, 0]]).bool()  # node 4: node 1
lecture_X = torch.tensor([[0.1, 0.7, 1.2, 1.1, 0.9],   # (N=4, M=5)
                          [0.3, 0.4, 0.3, 0.1, 1.2],
                          [0.5, 0.3, 1.5, 0.4, 0.6],
                          [1.0, 0.1, 0.2, 0.5, 0.1]])
lecture_W = torch.tensor([[0.1, 0.7, 1.2, 1.1],        # (M=5, K=4)
                          [0.3, 0.4, 0.3, 0.1],
                          [0.5, 0.3, 1.5, 0.4],
                          [1.0, 0.1, 0.2, 0.5],
                          [2.0, 0.4, 0.1, 2.4]])
# The same graph with a fifth node linked to nobody (features all 1).
lecture_A5 = torch.zeros(5, 5, dtype=torch.bool)
lecture_A5[:4, :4] = lecture_A
lecture_X5 = torch.cat([lecture_X, torch.ones(1, 5)])


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
    assert not torch.isnan(actual).any(), f"{what}: contains NaN\n{actual}"
    assert torch.allclose(actual, expected, atol=atol), (
        f"{what}: expected\n{expected}\ngot\n{actual}")


# %% [markdown] nbgrader={"grade": false, "grade_id": "part1", "locked": true, "schema_version": 3, "solution": false}
# ## Part 1 · Equal weights (2 points)
#
# The simplest weighted sum gives every input the same weight: the average. With a mask,
# only the rows the mask keeps take part, each with weight $1/(\text{number kept})$:
#
# $$\operatorname{pool}(v_1, \dots, v_n;\, m) = \frac{\sum_i m_i\, v_i}{\sum_i m_i},
#   \qquad m_i = 1 \text{ if row } i \text{ is kept, else } 0 .$$
#
# `mean_pool(values, mask=None)` takes `values` `(n, d)` and an optional boolean `mask`
# `(n,)` and returns the pooled vector `(d,)`:
#
# * without a mask, the average of all $n$ rows;
# * with a mask, the average of the rows where it is `True` — divide by the number of kept
#   rows, not by $n$;
# * a mask that keeps **no** row has nothing to average: return zeros `(d,)`, never `NaN`
#   ($0/0$).
#
# The lecture's 1, 3, 4 become 2 with equal weights on 1 and 3 only: the mask
# `[True, True, False]`. (The plain average is $8/3$.)

# %% nbgrader={"grade": false, "grade_id": "mean_pool", "locked": false, "schema_version": 3, "solution": true}
def mean_pool(values: torch.Tensor,
              mask: torch.Tensor | None = None) -> torch.Tensor:
    """Equal-weight average of the rows of `values` that `mask` keeps.

    values (n, d), mask (n,) bool or None (None: keep every row) -> (d,).
    A mask that keeps no row gives zeros.
    """
    ### BEGIN SOLUTION
    if mask is None:
        return values.mean(dim=0)
    kept = mask.to(values.dtype)                     # (n,): 1 = kept, 0 = not
    count = kept.sum()                               # the number of kept rows
    # (n,) @ (n, d) -> (d,); dividing by at least 1 keeps zeros when nothing is kept
    return (kept @ values) / count.clamp(min=1)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-mean-pool", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mean-pool")
### END HIDDEN TESTS
_column = lecture_inputs.unsqueeze(1)       # (3, 1): 1, 3, 4 as rows
assert_close(mean_pool(_column.clone()), torch.tensor([8 / 3]),
             "mean_pool of 1, 3, 4 (no mask)")
assert_close(mean_pool(lecture_X.clone()),
             torch.tensor([0.475, 0.375, 0.8, 0.525, 0.7]),
             "mean_pool of the lecture's feature matrix")
_values = torch.randn(6, 2, dtype=torch.float64)
assert mean_pool(_values).dtype == torch.float64, (
    "float64 values must give a float64 result")

# %% nbgrader={"grade": true, "grade_id": "test-mean-pool-mask", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mean-pool-mask")
### END HIDDEN TESTS
_column = lecture_inputs.unsqueeze(1)       # (3, 1): 1, 3, 4 as rows
assert_close(mean_pool(_column.clone(), torch.tensor([True, True, False])),
             torch.tensor([2.0]),
             "mean_pool of 1, 3, 4 keeping 1 and 3 (the lecture's 2)")
# Node 1's neighbours are nodes 2, 3 and 4: pooling them averages rows 2-4.
assert_close(mean_pool(lecture_X.clone(), lecture_A[0].clone()),
             torch.tensor([0.6, 0.2667, 0.6667, 0.3333, 0.6333]),
             "mean_pool of node 1's neighbours")
_pooled = mean_pool(_column.clone(), torch.tensor([False, False, False]))
assert not torch.isnan(_pooled).any(), (
    "a mask that keeps nothing must give zeros, not NaN")
assert_close(_pooled, torch.zeros(1),
             "mean_pool with a mask that keeps nothing")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part2", "locked": true, "schema_version": 3, "solution": false}
# ## Part 2 · Kernel weights (3 points)
#
# Nadaraya–Watson regression predicts at a query $q$ from observations $(x_i, y_i)$ with
# weights that grow as the key $x_i$ comes closer to the query. With a Gaussian kernel of
# bandwidth $h > 0$ the weights are a softmax of the scores
# $s_{ji} = -(q_j - x_i)^2 / (2h^2)$:
#
# $$a_{ji} = \frac{\exp\!\big(-(q_j - x_i)^2 / (2h^2)\big)}
#   {\sum_{i'=1}^{n} \exp\!\big(-(q_j - x_{i'})^2 / (2h^2)\big)} .$$
#
# `kernel_weights(queries, keys, bandwidth)` takes `queries` `(m,)` and `keys` `(n,)` and
# returns the weights `(m, n)`: row $j$ for query $j$, one column per key, every row
# summing to 1. Broadcasting gives all $m \times n$ differences at once, as in the chapter:
# `diffs = queries[:, None] - keys[None, :]`. `bandwidth` is a Python `float` or a 0-dim
# tensor; when it is a tensor, the gradient must reach it (a later part learns it).
#
# **Never `NaN`, whatever $h$.** For a tiny bandwidth such as $h = 10^{-6}$ the scores are
# huge negative numbers (about $-10^{12}$): $\exp$ of every one of them is $0$ and a
# hand-written $\exp(s) / \sum \exp(s)$ is $0/0$. Subtract each row's maximum score before
# `exp`, or use `torch.softmax`, which does: the weights then go to the nearest key, as
# they should.
#
# For the lecture's query $q = 2$ and keys $1, 3, 4$ with $h = 1$ the scores are
# $(-\tfrac12, -\tfrac12, -2)$ and the weights $(0.4498, 0.4498, 0.1004)$. As $h$ shrinks,
# the two nearest keys 1 and 3 (both at distance 1) share all the weight: $h = 0.1$ gives
# the scores $(-50, -50, -200)$ and the weights $(0.5, 0.5, 0)$. For the query $2.5$ and
# $h = 10^{-6}$ the scores are $(-1.125 \cdot 10^{12}, -1.25 \cdot 10^{11},
# -1.125 \cdot 10^{12})$: the nearest key, 3, takes all the weight, $(0, 1, 0)$. For a huge
# $h$ every score is close to 0 and the weights are equal, $(\tfrac13, \tfrac13,
# \tfrac13)$.

# %% nbgrader={"grade": false, "grade_id": "kernel_weights", "locked": false, "schema_version": 3, "solution": true}
def kernel_weights(queries: torch.Tensor, keys: torch.Tensor,
                   bandwidth) -> torch.Tensor:
    """Gaussian-kernel (Nadaraya-Watson) attention weights.

    queries (m,), keys (n,), bandwidth h > 0 (float or 0-dim tensor)
    -> weights (m, n):
    row j = softmax_i(-(queries[j] - keys[i])^2 / (2 h^2)).
    """
    ### BEGIN SOLUTION
    diffs = queries[:, None] - keys[None, :]            # (m, 1) - (1, n) -> (m, n)
    scores = -diffs ** 2 / (2 * bandwidth ** 2)         # (m, n)
    return torch.softmax(scores, dim=1)                 # stable for any h > 0
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-kernel-weights", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-kernel-weights")
### END HIDDEN TESTS
_q = torch.tensor([2.0])
assert_close(kernel_weights(_q, lecture_inputs.clone(), 1.0),
             torch.tensor([[0.4498, 0.4498, 0.1004]]),
             "kernel_weights for q = 2, keys 1, 3, 4, h = 1")
assert_close(kernel_weights(_q, lecture_inputs.clone(), 0.1),
             torch.tensor([[0.5, 0.5, 0.0]]),
             "kernel_weights for q = 2, keys 1, 3, 4, h = 0.1")
_w = kernel_weights(torch.tensor([0.0, 2.0, 5.0]), lecture_inputs.clone(),
                    torch.tensor(0.5))
assert _w.shape == (3, 3), f"expected shape (3, 3), got {tuple(_w.shape)}"
assert torch.allclose(_w.sum(dim=1), torch.ones(3)), (
    "every row of the weights must sum to 1")
assert _w[2].argmax() == 2, "query 5 must weigh key 4 (the nearest) most"

# %% nbgrader={"grade": true, "grade_id": "test-kernel-weights-extreme-bandwidths", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-kernel-weights-extreme-bandwidths")
### END HIDDEN TESTS
_w = kernel_weights(torch.tensor([2.5]), lecture_inputs.clone(), 1e-6)
assert not torch.isnan(_w).any(), (
    "kernel_weights gives NaN for h = 1e-6: subtract each row's maximum "
    "score before exp, or use torch.softmax")
assert_close(_w, torch.tensor([[0.0, 1.0, 0.0]]),
             "kernel_weights for q = 2.5, keys 1, 3, 4, h = 1e-6")
assert_close(kernel_weights(torch.tensor([2.0]), lecture_inputs.clone(),
                            1e4),
             torch.full((1, 3), 1 / 3),
             "kernel_weights for a huge h (equal weights)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part3", "locked": true, "schema_version": 3, "solution": false}
# ## Part 3 · Nadaraya–Watson regression (1 point)
#
# The prediction at each query is the weighted sum of the values:
#
# $$\hat f(q_j) = \sum_{i=1}^{n} a_{ji}\, y_i , \qquad \hat f = P\, y \quad
#   (P \text{ the } m \times n \text{ matrix of weights}).$$
#
# `nadaraya_watson(queries, keys, values, bandwidth)` returns the pair
# `(predictions, weights)`: `predictions` `(m,)` and the `weights` `(m, n)` they came
# from. Use your `kernel_weights`. (Its tests grade it on its own: when your
# `nadaraya_watson` calls `kernel_weights`, the hidden tests give it the correct weights,
# so that a bug in part 2 costs part 2's points only.)
#
# With the lecture's numbers as both keys and values, the query 2 and a small $h = 0.1$
# predict $0.5 \cdot 1 + 0.5 \cdot 3 = 2$: the lecture's output, now from computed
# weights. With the values $10, 20, 30$ and $h = 1$ the query 2 predicts
# $0.4498 \cdot 10 + 0.4498 \cdot 20 + 0.1004 \cdot 30 = 16.5055$.

# %% nbgrader={"grade": false, "grade_id": "nadaraya_watson", "locked": false, "schema_version": 3, "solution": true}
def nadaraya_watson(queries: torch.Tensor, keys: torch.Tensor,
                    values: torch.Tensor,
                    bandwidth) -> tuple[torch.Tensor, torch.Tensor]:
    """Nadaraya-Watson kernel regression as attention pooling.

    queries (m,), keys (n,), values (n,), bandwidth h > 0
    -> predictions (m,) = weights @ values, weights (m, n).
    """
    ### BEGIN SOLUTION
    weights = kernel_weights(queries, keys, bandwidth)   # (m, n)
    return weights @ values, weights                     # (m,), (m, n)
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-nadaraya-watson", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-nadaraya-watson")
### END HIDDEN TESTS
_result = nadaraya_watson(torch.tensor([2.0]), lecture_inputs.clone(),
                          lecture_inputs.clone(), 0.1)
assert isinstance(_result, tuple) and len(_result) == 2, (
    "nadaraya_watson must return the pair (predictions, weights)")
_predictions, _weights = _result
assert_close(_predictions, torch.tensor([2.0]),
             "the prediction for q = 2 with h = 0.1 (the lecture's 2)")
assert_close(_weights, torch.tensor([[0.5, 0.5, 0.0]]), "its weights")
_predictions, _weights = nadaraya_watson(
    torch.tensor([2.0, 4.0]), lecture_inputs.clone(),
    torch.tensor([10.0, 20.0, 30.0]), 1.0)
assert _predictions.shape == (2,) and _weights.shape == (2, 3)
assert_close(_predictions[0], torch.tensor(16.5055),
             "the prediction for q = 2, h = 1")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part4", "locked": true, "schema_version": 3, "solution": false}
# ## Part 4 · The leave-one-out loss (2 points)
#
# To learn the bandwidth from the observations alone, predict each observation from all
# the **others** and average the squared errors:
#
# $$L(\theta) = \frac{1}{n} \sum_{k=1}^{n} \big(\hat f_{-k}(x_k) - y_k\big)^2 ,
#   \qquad h = e^{\theta},$$
#
# where $\hat f_{-k}$ is the Nadaraya–Watson estimator whose query $x_k$ attends to every
# key except $x_k$ itself. Without leaving it out, every observation would predict itself
# perfectly as $h \to 0$ and the loss would always prefer the smallest bandwidth.
#
# `leave_one_out_loss(keys, values, log_bandwidth)` takes `keys` and `values` `(n,)`
# ($n \ge 2$) and $\theta$ as a 0-dim tensor, and returns the loss as a 0-dim tensor,
# differentiable with respect to $\theta$ (and to the keys and values). With the keys as
# the queries, the weights form an $n \times n$ matrix; leaving key $k$ out of row $k$ is a
# **mask on the diagonal**: give the diagonal's scores $-\infty$ *before* the softmax
# (`torch.eye(n, dtype=torch.bool)` and `masked_fill`), so that the other weights of the
# row still sum to 1. Zeroing the diagonal after the softmax and dividing by what is left
# also renormalises, but gives $0/0$ for a small $h$, where the softmax gave the diagonal
# all the weight. Like `kernel_weights`, the loss must stay finite for every $h$.
#
# For the lecture's numbers as keys and values and $h = 1$: $\hat f_{-1}(1) = 3.0759$,
# $\hat f_{-2}(3) = 3.4527$, $\hat f_{-3}(4) = 2.9640$, and $L = 1.8625$. For a tiny $h$
# each observation is predicted by its nearest other key — $3, 4, 3$ — and
# $L = (2^2 + 1^2 + 1^2)/3 = 2$.

# %% nbgrader={"grade": false, "grade_id": "leave_one_out_loss", "locked": false, "schema_version": 3, "solution": true}
def leave_one_out_loss(keys: torch.Tensor, values: torch.Tensor,
                       log_bandwidth: torch.Tensor) -> torch.Tensor:
    """Mean squared error of predicting each observation from the others.

    keys (n,), values (n,), log_bandwidth: 0-dim tensor theta (h = e^theta)
    -> 0-dim tensor (1/n) sum_k (f_{-k}(keys[k]) - values[k])^2.
    """
    ### BEGIN SOLUTION
    n = keys.shape[0]
    h = torch.exp(log_bandwidth)
    diffs = keys[:, None] - keys[None, :]                # (n, n)
    scores = -diffs ** 2 / (2 * h ** 2)                  # (n, n)
    itself = torch.eye(n, dtype=torch.bool, device=keys.device)
    # -inf on the diagonal: row k attends to every key but its own
    weights = torch.softmax(scores.masked_fill(itself, float("-inf")), dim=1)
    predictions = weights @ values                       # (n,): f_{-k}(x_k)
    return ((predictions - values) ** 2).mean()
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-leave-one-out-loss", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-leave-one-out-loss")
### END HIDDEN TESTS
_k = lecture_inputs
assert_close(leave_one_out_loss(_k.clone(), _k.clone(), torch.tensor(0.0)),
             torch.tensor(1.8625), "leave_one_out_loss for 1, 3, 4, h = 1")
assert_close(leave_one_out_loss(_k.clone(), _k.clone(),
                                torch.tensor(math.log(1e-3))),
             torch.tensor(2.0), "leave_one_out_loss for 1, 3, 4, h = 0.001")
_theta = torch.tensor(0.0, requires_grad=True)
leave_one_out_loss(_k.clone(), _k.clone(), _theta).backward()
assert _theta.grad is not None and _theta.grad != 0, (
    "the loss must be differentiable with respect to log_bandwidth")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part5", "locked": true, "schema_version": 3, "solution": false}
# ## Part 5 · Learning the bandwidth (2 points)
#
# `fit_bandwidth(keys, values)` returns the bandwidth $h$ that minimises
# `leave_one_out_loss`, as a Python `float` (`theta.exp().item()`, say). Learn
# $\theta = \log h$ by gradient descent, as the chapter did — it keeps $h$ positive — with
# two precautions the chapter could skip:
#
# * **The loss is not convex.** It is flat for very small $h$ (each observation is
#   predicted by its nearest neighbour, whatever $h$) and for very large $h$ (every
#   prediction is the mean), so gradient descent started on either plateau does not move.
#   Scan a grid of $\theta$ first, wide enough for keys of any scale (from far below the
#   smallest distance between keys to far above their spread), and start from its best
#   point.
# * **The size of a good step depends on the data.** Take steps small enough that the loss
#   goes down (halve the step when it goes up), or use an optimiser from `torch.optim`.
#
# Any $h$ whose loss is within 1 % of the smallest loss counts as minimising. Keep it
# quick: the hidden tests fit six data sets, from 2 to 100 observations, within the time a
# test cell may take (a few seconds in all is plenty). A fit evaluates the loss a few
# hundred times, so compute it with tensor operations on the $n \times n$ matrix, as part 4
# suggests: a Python loop over all $n^2$ pairs of keys takes a tenth of a second per loss
# for $n = 100$. This part is graded end to end: if your `fit_bandwidth` uses your
# `leave_one_out_loss`, it needs part 4 to be right.
#
# The visible test fits the chapter's kind of data, 40 noisy observations of
# $2 \sin x + x/2$: the loss is within 1 % of its minimum for $h$ between about 0.198 and
# 0.268.

# %% nbgrader={"grade": false, "grade_id": "fit_bandwidth", "locked": false, "schema_version": 3, "solution": true}
def fit_bandwidth(keys: torch.Tensor, values: torch.Tensor) -> float:
    """The bandwidth h > 0 that minimises the leave-one-out loss.

    keys (n,), values (n,), n >= 2 -> h as a Python float, whose
    leave_one_out_loss(keys, values, log h) is the smallest.
    """
    ### BEGIN SOLUTION
    keys, values = keys.detach().double(), values.detach().double()
    spread = (keys.max() - keys.min()).item()
    if spread == 0.0:
        return 1.0                 # all keys equal: every h gives the same loss
    # 1. A grid of theta = log h, from far below the spacing of the keys to far above
    #    their spread; gradient descent starts from its best point.
    thetas = torch.linspace(math.log(spread) - 10, math.log(spread) + 3, 53,
                            dtype=torch.float64)
    with torch.no_grad():
        losses = torch.stack([leave_one_out_loss(keys, values, t) for t in thetas])
    best = int(torch.argmin(losses))
    theta = thetas[best].clone().requires_grad_(True)
    loss = leave_one_out_loss(keys, values, theta)
    (grad,) = torch.autograd.grad(loss, theta)
    # 2. Gradient descent on theta; the first step moves at most one grid spacing, a
    #    step that lowers the loss is taken and the next one is longer, else it is halved.
    lr = (thetas[1] - thetas[0]).item() / max(abs(grad.item()), 1e-12)
    for _ in range(60):
        candidate = (theta - lr * grad).detach().requires_grad_(True)
        candidate_loss = leave_one_out_loss(keys, values, candidate)
        if candidate_loss < loss:
            theta, loss = candidate, candidate_loss
            (grad,) = torch.autograd.grad(loss, theta)
            lr *= 1.5
        else:
            lr *= 0.5
    return math.exp(theta.item())
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-fit-bandwidth", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-fit-bandwidth")
### END HIDDEN TESTS
_g = torch.Generator().manual_seed(0)
_x = torch.rand(40, generator=_g) * 5           # (40,) keys in [0, 5]
_y = 2 * torch.sin(_x) + _x / 2 + 0.4 * torch.randn(40, generator=_g)
_h = fit_bandwidth(_x, _y)
assert isinstance(_h, float), (
    f"fit_bandwidth must return a Python float, got {type(_h).__name__}")
assert 0.19 < _h < 0.27, (
    f"fit_bandwidth returned h = {_h:.4f}; the leave-one-out loss is "
    "within 1 % of its minimum only for h between about 0.198 and 0.268")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part6", "locked": true, "schema_version": 3, "solution": false}
# ## Part 6 · Equal weights on a graph (2 points)
#
# A graph convolution aggregates each node's neighbours. Summing them, $\mathbf{A}\mathbf{X}$,
# lets the size of the result grow with the number of neighbours (the degree); averaging
# them gives each neighbour of node $v$ the weight $1/|\mathcal{N}(v)|$:
#
# $$\mathbf{D}^{-1}\mathbf{A}, \qquad D_{vv} = |\mathcal{N}(v)| = \sum_u A_{vu}$$
#
# a **row-stochastic** matrix: the weights of every row are non-negative and sum to 1.
# With **self-loops** each node also keeps a share of itself: $\mathbf{A}$ becomes
# $\mathbf{A} + \mathbf{I}$ and the degrees grow by one, $(\mathbf{D} + \mathbf{I})^{-1}
# (\mathbf{A} + \mathbf{I})$.
#
# `mean_aggregation(adjacency, self_loops=False)` takes the boolean adjacency matrix
# `(N, N)` and returns these weights as a `float32` matrix `(N, N)`: a boolean input has no
# floating-point dtype to keep, so the weights take PyTorch's default, `float32`, and
# `aggregate` below converts them to the features' dtype. A node **without
# neighbours** (an isolated node, degree 0) has nothing to average: its row is all zeros
# — not $0/0$ — or, with self-loops, just its own weight 1.
#
# On the lecture's graph the degrees are $(3, 2, 2, 1)$: node 1 gives each of its
# neighbours $1/3$, node 4 gives node 1 all its weight. With self-loops the degrees are
# $(4, 3, 3, 2)$.

# %% nbgrader={"grade": false, "grade_id": "mean_aggregation", "locked": false, "schema_version": 3, "solution": true}
def mean_aggregation(adjacency: torch.Tensor,
                     self_loops: bool = False) -> torch.Tensor:
    """Degree-normalised aggregation weights D^-1 A, or with self-loops
    (D + I)^-1 (A + I).

    adjacency (N, N) bool, symmetric, False on the diagonal
    -> float32 (N, N); a node without neighbours gets a zero row (with
    self-loops: only its own weight 1).
    """
    ### BEGIN SOLUTION
    A = adjacency.to(torch.float32)                      # (N, N)
    if self_loops:
        A = A + torch.eye(A.shape[0], dtype=torch.float32)
    degree = A.sum(dim=1, keepdim=True)                  # (N, 1)
    return A / degree.clamp(min=1)                       # an isolated row stays 0
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-mean-aggregation", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mean-aggregation")
### END HIDDEN TESTS
assert_close(mean_aggregation(lecture_A.clone()),
             torch.tensor([[0.0, 1 / 3, 1 / 3, 1 / 3],
                           [1 / 2, 0.0, 1 / 2, 0.0],
                           [1 / 2, 1 / 2, 0.0, 0.0],
                           [1.0, 0.0, 0.0, 0.0]]),
             "mean_aggregation of the lecture's graph")
# The lecture's graph with a fifth node linked to nobody.
_weights = mean_aggregation(lecture_A5.clone())
assert not torch.isnan(_weights).any(), (
    "a node without neighbours must get a zero row, not NaN")
assert_close(_weights[4], torch.zeros(5),
             "the row of a node without neighbours")

# %% nbgrader={"grade": true, "grade_id": "test-mean-aggregation-self-loops", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-mean-aggregation-self-loops")
### END HIDDEN TESTS
assert_close(mean_aggregation(lecture_A.clone(), self_loops=True),
             torch.tensor([[1 / 4, 1 / 4, 1 / 4, 1 / 4],
                           [1 / 3, 1 / 3, 1 / 3, 0.0],
                           [1 / 3, 1 / 3, 1 / 3, 0.0],
                           [1 / 2, 0.0, 0.0, 1 / 2]]),
             "mean_aggregation of the lecture's graph with self-loops")
assert_close(mean_aggregation(lecture_A5.clone(), self_loops=True)[4],
             torch.tensor([0.0, 0.0, 0.0, 0.0, 1.0]),
             "with self-loops, a node without neighbours keeps only itself")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part7", "locked": true, "schema_version": 3, "solution": false}
# ## Part 7 · Attention on a graph (3 points)
#
# Equal weights ignore the features: every neighbour counts the same. Attention computes
# each neighbour's weight from the features instead. Node $v$ is the query, its
# neighbours are the keys, and the score is the scaled dot product of their features:
#
# $$s_{vu} = \frac{\mathbf{x}_v^\top \mathbf{x}_u}{\sqrt{M}}, \qquad
#   a_{vu} = \begin{cases}
#   \dfrac{\exp(s_{vu})}{\sum_{u' \in \mathcal{N}(v)} \exp(s_{vu'})} & u \in \mathcal{N}(v) \\
#   0 & \text{otherwise.} \end{cases}$$
#
# `dot_attention_aggregation(features, adjacency)` takes `features` `(N, M)` and the
# adjacency matrix, and returns the weights `(N, N)` in the features' dtype:
#
# * the softmax runs over the **neighbours only**: a node that is not a neighbour gets
#   weight exactly 0, and the neighbours' weights sum to 1. Give the non-neighbours' scores
#   $-\infty$ before the softmax; zeroing them after an ordinary softmax leaves rows that
#   do not sum to 1;
# * a node is not its own neighbour (the diagonal of `adjacency` is `False`);
# * a node **without neighbours** gets a zero row: a softmax over a row of $-\infty$ is
#   $0/0$ (`NaN`), so treat such rows apart;
# * the scores of large features are large: use `torch.softmax` (or subtract the row's
#   maximum) so that nothing overflows.
#
# On the lecture's graph node 1 gives its neighbours 2, 3 and 4 the weights
# $(0.2949, 0.4998, 0.2053)$: node 3, whose features are the most similar to node 1's,
# gets half of its attention. Node 4 has one neighbour, which gets all its weight.

# %% nbgrader={"grade": false, "grade_id": "dot_attention_aggregation", "locked": false, "schema_version": 3, "solution": true}
def dot_attention_aggregation(features: torch.Tensor,
                              adjacency: torch.Tensor) -> torch.Tensor:
    """Attention weights over each node's neighbours.

    features (N, M), adjacency (N, N) bool
    -> weights (N, N) in features' dtype: row v is the softmax over the
    neighbours u of features[v] . features[u] / sqrt(M), exactly 0
    outside them; a zero row for a node without neighbours.
    """
    ### BEGIN SOLUTION
    M = features.shape[1]
    scores = features @ features.T / math.sqrt(M)        # (N, N)
    filled = scores.masked_fill(~adjacency, float("-inf"))
    has_neighbour = adjacency.any(dim=1, keepdim=True)   # (N, 1)
    # An isolated node's row would be all -inf: 0 instead, so no NaN ...
    filled = filled.masked_fill(~has_neighbour, 0.0)
    weights = torch.softmax(filled, dim=1)
    return weights.masked_fill(~adjacency, 0.0)          # ... and zeroed afterwards
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-dot-attention", "locked": true, "points": 2, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-dot-attention")
### END HIDDEN TESTS
_weights = dot_attention_aggregation(lecture_X.clone(), lecture_A.clone())
assert_close(_weights,
             torch.tensor([[0.0, 0.2949, 0.4998, 0.2053],
                           [0.5424, 0.0, 0.4576, 0.0],
                           [0.6677, 0.3323, 0.0, 0.0],
                           [1.0, 0.0, 0.0, 0.0]]),
             "dot_attention_aggregation on the lecture's graph")
_weights = dot_attention_aggregation(lecture_X.double(), lecture_A.clone())
assert _weights.dtype == torch.float64, (
    "float64 features must give float64 weights")

# %% nbgrader={"grade": true, "grade_id": "test-dot-attention-isolated", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-dot-attention-isolated")
### END HIDDEN TESTS
# The lecture's graph with a fifth node linked to nobody.
_weights = dot_attention_aggregation(lecture_X5.clone(), lecture_A5.clone())
assert not torch.isnan(_weights).any(), (
    "a node without neighbours must get a zero row, not NaN")
assert_close(_weights[4], torch.zeros(5),
             "the row of a node without neighbours")
assert_close(_weights[:4, :4],
             torch.tensor([[0.0, 0.2949, 0.4998, 0.2053],
                           [0.5424, 0.0, 0.4576, 0.0],
                           [0.6677, 0.3323, 0.0, 0.0],
                           [1.0, 0.0, 0.0, 0.0]]),
             "the other nodes' weights (unchanged by the isolated node)")

# %% [markdown] nbgrader={"grade": false, "grade_id": "part8", "locked": true, "schema_version": 3, "solution": false}
# ## Part 8 · Aggregation and transformation (1 point)
#
# Whatever the weights — the adjacency matrix itself (a sum), $\mathbf{D}^{-1}\mathbf{A}$
# (an average) or attention — one layer of the lecture's graph network aggregates, then
# transforms:
#
# $$\mathbf{H} = (\text{weights})\, \mathbf{X}\, \mathbf{W}
#   \qquad (N \times N)(N \times M)(M \times K) \to (N \times K).$$
#
# `aggregate(weights, features, W)` returns $\mathbf{H}$ `(N, K)` in the features' dtype.
# `mean_aggregation` always returns `float32`, and PyTorch refuses to multiply a `float32`
# matrix by a `float64` one: convert the weights to the features' dtype first
# (`weights.to(features.dtype)`).
#
# With the sum, $\mathbf{A}\mathbf{X}\mathbf{W}$, node 1's first entry is the lecture's
# hand computation $1.8 \cdot 0.1 + 0.8 \cdot 0.3 + 2.0 \cdot 0.5 + 1.0 \cdot 1.0 +
# 1.9 \cdot 2.0 = 6.22$.

# %% nbgrader={"grade": false, "grade_id": "aggregate", "locked": false, "schema_version": 3, "solution": true}
def aggregate(weights: torch.Tensor, features: torch.Tensor,
              W: torch.Tensor) -> torch.Tensor:
    """One graph layer without its nonlinearity: aggregate, then transform.

    weights (N, N), features (N, M), W (M, K)
    -> (N, K) = weights @ features @ W, in features' dtype.
    """
    ### BEGIN SOLUTION
    return weights.to(features.dtype) @ features @ W
    ### END SOLUTION


# %% nbgrader={"grade": true, "grade_id": "test-aggregate", "locked": true, "points": 1, "schema_version": 3, "solution": false}
### BEGIN HIDDEN TESTS
from _autograder_probe import report

report("test-aggregate")
### END HIDDEN TESTS
_H = aggregate(lecture_A.float(), lecture_X.clone(), lecture_W.clone())
assert _H.shape == (4, 4), (
    f"expected shape (N, K) = (4, 4), got {tuple(_H.shape)}")
assert_close(_H[0], torch.tensor([6.22, 3.04, 5.79, 7.92]),
             "node 1's row of A X W (the lecture's sum)")
assert_close(aggregate(torch.tensor([[0.0, 1 / 3, 1 / 3, 1 / 3],
                                     [1 / 2, 0.0, 1 / 2, 0.0],
                                     [1 / 2, 1 / 2, 0.0, 0.0],
                                     [1.0, 0.0, 0.0, 0.0]]),
                       lecture_X.clone(), lecture_W.clone())[3],
             torch.tensor([3.72, 1.18, 2.44, 3.37]),
             "node 4's row of the average (its only neighbour, node 1)")
_H = aggregate(torch.ones(4, 4) / 4, lecture_X.double(), lecture_W.double())
assert _H.dtype == torch.float64, (
    "float32 weights with float64 features must give float64: "
    "convert the weights")

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-intro", "locked": true, "schema_version": 3, "solution": false}
# ## Written questions (4 points, graded by hand)
#
# Answer each question in the cell below it, in a few sentences of your own (an equation or a
# number where it helps). These answers are read and graded by a person, after the tests have
# graded your code: your feedback shows them as *awaiting a grade* until then.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-bandwidth-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 1 (2 points).** Your `loo_loss` leaves each point out and predicts it from the
# others, and `fit_bandwidth` minimises it. Suppose the training data contained every pair
# $(x_i, y_i)$ twice (the same measurement recorded twice). What does the leave-one-out loss
# tend to as $h \to 0$, and which bandwidth would `fit_bandwidth` then choose? Say how you
# would change the loss so that it still measures how well $h$ predicts points it has not
# seen.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-bandwidth", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** Leaving one copy of $(x_i, y_i)$ out still leaves its twin, at distance 0.
# As $h \to 0$ the twin's weight tends to 1, so $x_i$ is predicted as exactly $y_i$ and every
# term of the loss tends to 0: the loss again prefers the smallest bandwidth, which memorises
# the noise, the very failure leave-one-out was meant to prevent. The fix leaves out every key
# at the same input (drop all $j$ with $x_j = x_i$ from the prediction of $x_i$, or merge the
# duplicates into one point before fitting). Near-duplicates, at tiny but non-zero distances,
# still pull towards a small $h$.
#
# **Rubric (2 points).** 1 point for the limit: the twin is at distance 0, the loss tends to 0,
# so the smallest $h$ wins (overfitting). 1 point for a fix that keeps a point's copies out of
# its own prediction (leave all copies out, or deduplicate), with the reason.

# %% [markdown] nbgrader={"grade": false, "grade_id": "written-degree-question", "locked": true, "schema_version": 3, "solution": false}
# **Question 2 (2 points).** Predict before you run: add a fifth node to the lecture's
# 4-node graph, joined only to node 1. Which rows of `mean_aggregation`'s weights change, and
# to what numbers (without self-loops)? Does node 4's row of `aggregate(weights, X, W)`
# change? Then build the new adjacency matrix (give node 5 any features), run your functions,
# and say whether they agree with your prediction, and why.

# %% [markdown] nbgrader={"grade": true, "grade_id": "written-degree", "locked": false, "points": 2, "schema_version": 3, "solution": true}
# **Model answer.** Node 1's neighbours grow from nodes 2, 3, 4 to nodes 2, 3, 4, 5: its row
# changes from $1/3$ on each of nodes 2, 3, 4 to $1/4$ on each of nodes 2, 3, 4, 5. The new
# row 5 has weight 1 on node 1. Rows 2, 3 and 4 do not change, since their neighbours do not.
# Node 4's aggregate does not change either: its only neighbour is node 1, and one layer
# averages node 1's *features* $\mathbf{x}_1$, which the new node does not touch; only the
# aggregates of node 1 and of the new node change. Running the functions confirms it. With a
# second layer, node 4 would read node 1's new first-layer output, and the change would reach
# it.
#
# **Rubric (2 points).** 1 point for the weights: row 1 becomes $1/4$ on four nodes, a new row 5
# has 1 on node 1, the other rows are unchanged. 1 point for node 4: unchanged after one layer,
# with the reason (it reads node 1's features, not node 1's aggregate), checked by running the
# functions; noting that a second layer would change it is welcome.
