"""Hidden tests of `attention-pooling`: cases and reference answers (never released).

The grader builds these calls, ships only their inputs into the student's sandboxed kernel,
and compares what the kernel reports with the references below (see autograder.hidden).
The references are written as plain loops over queries, keys and nodes, unlike any
vectorised answer, so that a shared bug is unlikely. ``fit_bandwidth`` is judged by the
leave-one-out loss of the bandwidth it returns, computed here with numpy.
"""

from __future__ import annotations

import math

import numpy as np
import torch

from autograder.hidden import ANY, Call, Helper, StandIn, Student, Suite

SUITE = Suite()
F32, F64 = torch.float32, torch.float64


# --------------------------------------------------------------------------- references


def _softmax(scores: list) -> list:
    """Softmax of a list of 0-dim tensors, the largest score subtracted first."""
    top = torch.stack(scores).max().detach()
    exps = [torch.exp(s - top) for s in scores]
    total = exps[0]
    for e in exps[1:]:
        total = total + e
    return [e / total for e in exps]


def ref_mean_pool(values, mask=None):
    n = values.shape[0]
    kept = [i for i in range(n) if mask is None or bool(mask[i])]
    if not kept:
        return values[0] * 0                    # zeros (d,), still part of the graph
    total = values[kept[0]]
    for i in kept[1:]:
        total = total + values[i]
    return total / len(kept)


def ref_kernel_weights(queries, keys, bandwidth):
    rows = []
    for j in range(queries.shape[0]):
        scores = [-(queries[j] - keys[i]) ** 2 / (2 * bandwidth ** 2)
                  for i in range(keys.shape[0])]
        rows.append(torch.stack(_softmax(scores)))
    return torch.stack(rows)


def ref_nadaraya_watson(queries, keys, values, bandwidth):
    weights = ref_kernel_weights(queries, keys, bandwidth)
    return _weighted(weights, values), weights


def _weighted(weights, values):
    predictions = []
    for j in range(weights.shape[0]):
        total = weights[j, 0] * values[0]
        for i in range(1, values.shape[0]):
            total = total + weights[j, i] * values[i]
        predictions.append(total)
    return torch.stack(predictions)


def nadaraya_watson_given(weights: torch.Tensor):
    """The reference of ``nadaraya_watson`` when ``kernel_weights`` returns ``weights``."""
    def reference(queries, keys, values, bandwidth):
        return _weighted(weights, values), weights.clone()
    return reference


def ref_leave_one_out_loss(keys, values, log_bandwidth):
    n = keys.shape[0]
    h = torch.exp(log_bandwidth)
    total = None
    for k in range(n):
        others = [i for i in range(n) if i != k]
        weights = _softmax([-(keys[k] - keys[i]) ** 2 / (2 * h ** 2) for i in others])
        prediction = weights[0] * values[others[0]]
        for w, i in zip(weights[1:], others[1:], strict=True):
            prediction = prediction + w * values[i]
        error = (prediction - values[k]) ** 2
        total = error if total is None else total + error
    return total / n


def ref_mean_aggregation(adjacency, self_loops=False):
    N = adjacency.shape[0]
    weights = torch.zeros(N, N, dtype=torch.float32)
    for v in range(N):
        linked = [u for u in range(N) if bool(adjacency[v, u]) or (self_loops and u == v)]
        for u in linked:
            weights[v, u] = 1.0 / len(linked)
    return weights


def ref_dot_attention_aggregation(features, adjacency):
    N, M = features.shape
    rows = []
    for v in range(N):
        row = [features[v, 0] * 0 for _ in range(N)]     # zeros of features' dtype
        neighbours = [u for u in range(N) if bool(adjacency[v, u])]
        if neighbours:
            scores = [torch.dot(features[v], features[u]) / math.sqrt(M) for u in neighbours]
            for u, a in zip(neighbours, _softmax(scores), strict=True):
                row[u] = a
        rows.append(torch.stack(row))
    return torch.stack(rows)


def ref_aggregate(weights, features, W):
    weights = weights.to(features.dtype)
    N, M = features.shape
    rows = []
    for v in range(N):
        mixed = weights[v, 0] * features[0]                  # (M,)
        for u in range(1, N):
            mixed = mixed + weights[v, u] * features[u]
        row = []
        for k in range(W.shape[1]):
            total = mixed[0] * W[0, k]
            for i in range(1, M):
                total = total + mixed[i] * W[i, k]
            row.append(total)
        rows.append(torch.stack(row))
    return torch.stack(rows)


# --------------------------------------------------------------------------- fit_bandwidth


def np_leave_one_out_loss(keys: np.ndarray, values: np.ndarray, h: float) -> float:
    """The leave-one-out loss in float64, finite for every h > 0 (nearest neighbour as
    h -> 0, the others' mean as h -> infinity)."""
    d2 = (keys[:, None] - keys[None, :]) ** 2
    np.fill_diagonal(d2, np.inf)
    nearest = d2.min(axis=1, keepdims=True)
    with np.errstate(over="ignore", invalid="ignore"):
        scores = -0.5 * ((d2 - nearest) / h) / h          # 0 for the nearest other key
    scores = np.where(np.isnan(scores), -np.inf, scores)
    weights = np.exp(scores)
    weights /= weights.sum(axis=1, keepdims=True)
    return float(np.mean((weights @ values - values) ** 2))


def smallest_loss(keys: np.ndarray, values: np.ndarray) -> tuple[float, float]:
    """(h, loss) at the minimum: a dense grid of log h from far below the smallest gap
    between keys to far above their spread, refined by golden-section search."""
    gaps = np.diff(np.sort(keys))
    gaps = gaps[gaps > 0]
    thetas = np.linspace(math.log(gaps.min()) - 4, math.log(keys.max() - keys.min()) + 8,
                         601)
    losses = [np_leave_one_out_loss(keys, values, math.exp(t)) for t in thetas]
    best = int(np.argmin(losses))
    low, high = thetas[max(best - 1, 0)], thetas[min(best + 1, len(thetas) - 1)]
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(60):
        a, b = high - ratio * (high - low), low + ratio * (high - low)
        if np_leave_one_out_loss(keys, values, math.exp(a)) < \
                np_leave_one_out_loss(keys, values, math.exp(b)):
            high = b
        else:
            low = a
    refined = (low + high) / 2
    candidates = [(losses[best], thetas[best]),
                  (np_leave_one_out_loss(keys, values, math.exp(refined)), refined)]
    loss, theta = min(candidates)
    return math.exp(theta), loss


def fit_check(keys: torch.Tensor, values: torch.Tensor):
    """Judge ``[h, is_float]`` (see probe_helpers.fitted_bandwidth): a Python float h > 0
    whose leave-one-out loss is within 1 % of the smallest."""
    k, v = keys.double().numpy(), values.double().numpy()
    best_h, best_loss = smallest_loss(k, v)

    def check(outputs: list[np.ndarray]) -> str | None:
        if len(outputs) != 1 or outputs[0].shape != (2,):
            return "the hidden test's report is malformed"
        h, is_float = (float(x) for x in outputs[0])
        if not is_float:
            return ("fit_bandwidth must return a Python float (for example "
                    "theta.exp().item()), not a tensor or another type")
        if not math.isfinite(h) or h <= 0:
            return f"fit_bandwidth returned h = {h}; expected a positive number"
        loss = np_leave_one_out_loss(k, v, h)
        if loss > 1.01 * best_loss + 1e-12:
            return (f"fit_bandwidth returned h = {h:.4g}, whose leave-one-out loss "
                    f"{loss:.4g} is more than 1 % above the smallest, {best_loss:.4g} "
                    f"(near h = {best_h:.3g})")
        return None
    return check


# --------------------------------------------------------------------------- cases


def randn(g, *shape, dtype=F32):
    return torch.randn(*shape, generator=g, dtype=dtype)


def rand(g, *shape, dtype=F32):
    return torch.rand(*shape, generator=g, dtype=dtype)


def bool_list(mask: torch.Tensor) -> list:
    return mask.int().tolist()


@SUITE.test("test-mean-pool", seed=101)
def mean_pool_cases(g):
    for n, d, dtype in [(5, 3, F32), (1, 4, F32), (6, 2, F64), (1, 1, F64), (7, 1, F32)]:
        values = randn(g, n, d, dtype=dtype)
        yield Call(f"mean_pool without a mask, n={n}, d={d}, {dtype}", "mean_pool", (values,),
                   expect=ref_mean_pool)
        yield Call(f"mean_pool(values, None), n={n}, d={d}, {dtype}", "mean_pool",
                   (values, None), expect=ref_mean_pool)


@SUITE.test("test-mean-pool-mask", seed=202)
def mean_pool_mask_cases(g):
    masks = [([True, False, True, True, False], F32), ([False, False, True, False], F32),
             ([True, True, True], F64), ([False, True, False, True, True, False], F64),
             ([True], F32), ([False, False, False, False], F32), ([False, False, False], F64),
             ([False], F64)]
    for shown, dtype in masks:
        mask = torch.tensor(shown)
        d = 3 if len(shown) > 1 else 2
        what = "a mask that keeps nothing" if not any(shown) else f"mask {bool_list(mask)}"
        yield Call(f"mean_pool with {what}, n={len(shown)}, d={d}, {dtype}", "mean_pool",
                   (randn(g, len(shown), d, dtype=dtype), mask), expect=ref_mean_pool)
    values = randn(g, 4, 5, dtype=F64)
    yield Call("mean_pool(values, mask=...) by keyword, mask [1, 0, 0, 1], float64",
               "mean_pool", (values,), {"mask": torch.tensor([True, False, False, True])},
               expect=ref_mean_pool)


def _bandwidth(value: float, tensor: bool, dtype):
    return torch.tensor(value, dtype=dtype) if tensor else value


def _shown(bandwidth) -> str:
    if isinstance(bandwidth, torch.Tensor):
        return f"h = tensor({float(bandwidth):g})"
    return f"h = {bandwidth:g}"


@SUITE.test("test-kernel-weights", seed=303)
def kernel_weights_cases(g):
    for m, n, h, tensor, dtype in [(4, 6, 0.7, False, F32), (5, 5, 0.4, True, F32),
                                   (1, 1, 0.5, False, F32), (7, 3, 1.3, True, F64),
                                   (3, 8, 2.0, False, F64), (1, 4, 0.25, True, F64)]:
        bandwidth = _bandwidth(h, tensor, dtype)
        yield Call(f"kernel_weights, m={m} queries, n={n} keys, {_shown(bandwidth)}, {dtype}",
                   "kernel_weights",
                   (2 * randn(g, m, dtype=dtype), 2 * randn(g, n, dtype=dtype), bandwidth),
                   expect=ref_kernel_weights)


@SUITE.test("test-kernel-weights-extreme-bandwidths", seed=404)
def kernel_weights_extreme_cases(g):
    for m, n, h, tensor, dtype in [(4, 5, 1e-6, False, F32), (3, 6, 1e-5, True, F64),
                                   (2, 4, 1e-6, True, F32), (3, 5, 1e3, False, F32),
                                   (4, 3, 1e4, True, F64)]:
        bandwidth = _bandwidth(h, tensor, dtype)
        yield Call(f"kernel_weights with a {'tiny' if h < 1 else 'huge'} bandwidth, "
                   f"m={m}, n={n}, {_shown(bandwidth)}, {dtype}", "kernel_weights",
                   (2 * randn(g, m, dtype=dtype), 2 * randn(g, n, dtype=dtype), bandwidth),
                   expect=ref_kernel_weights)
    # Queries far from every key: exp of every score underflows to 0 (float32 below about
    # -104, float64 below about -745). In float32 a difference of ~20 already loses the
    # gradients' last digits to cancellation, so only the float64 case compares them.
    for far, dtype, gradients in [(20.0, F32, False), (50.0, F64, True)]:
        yield Call(f"kernel_weights with queries near {far:g}, keys near 0, h = 1, {dtype} "
                   f"(scores near {-far * far / 2:g})", "kernel_weights",
                   (far + randn(g, 3, dtype=dtype), randn(g, 4, dtype=dtype), 1.0),
                   expect=ref_kernel_weights, gradients=gradients)


@SUITE.test("test-nadaraya-watson", seed=505)
def nadaraya_watson_cases(g):
    for m, n, h, tensor, dtype in [(4, 6, 0.7, True, F32), (3, 5, 0.5, False, F32),
                                   (1, 1, 0.3, True, F32), (6, 4, 1.2, True, F64),
                                   (2, 7, 0.9, False, F64), (5, 5, 0.6, True, F64)]:
        queries, keys = 2 * randn(g, m, dtype=dtype), 2 * randn(g, n, dtype=dtype)
        values = randn(g, n, dtype=dtype)
        bandwidth = _bandwidth(h, tensor, dtype)
        weights = ref_kernel_weights(queries, keys, bandwidth).detach()
        # The stand-in checks the bandwidth it is given when it is a tensor (a float may be
        # passed on converted).
        given = (queries, keys, bandwidth if tensor else ANY)
        yield Call(f"nadaraya_watson, m={m}, n={n}, {_shown(bandwidth)}, {dtype} "
                   "(kernel_weights returns the right weights here)", "nadaraya_watson",
                   (queries, keys, values, bandwidth), expect=nadaraya_watson_given(weights),
                   inline=ref_nadaraya_watson,
                   stand_ins={"kernel_weights": StandIn(given, weights)})


@SUITE.test("test-leave-one-out-loss", seed=606)
def leave_one_out_cases(g):
    for n, h, dtype in [(5, 0.5, F32), (2, 1.0, F32), (8, 2.5, F32), (6, 1e-4, F32),
                        (3, 0.8, F64), (10, 0.3, F64), (4, 1e-5, F64), (7, 40.0, F64)]:
        keys = 3 * rand(g, n, dtype=dtype)
        yield Call(f"leave_one_out_loss, n={n}, h = {h:g} (log_bandwidth = {math.log(h):.3f}), "
                   f"{dtype}", "leave_one_out_loss",
                   (keys, randn(g, n, dtype=dtype), torch.tensor(math.log(h), dtype=dtype)),
                   expect=ref_leave_one_out_loss)


def fit_datasets(g) -> list[tuple[str, torch.Tensor, torch.Tensor]]:
    sets = [("n=2, float64", torch.tensor([0.0, 1.0], dtype=F64),
             torch.tensor([1.0, -2.0], dtype=F64))]
    keys = 5 * rand(g, 60, dtype=F64)
    sets.append(("a noisy sine, n=60, keys in [0, 5], float64", keys,
                 torch.sin(2 * keys) + 0.3 * randn(g, 60, dtype=F64)))
    keys = 5 * rand(g, 100)
    sets.append(("a noisy sine, n=100, keys in [0, 5], float32", keys,
                 torch.sin(2 * keys) + 0.2 * randn(g, 100)))
    keys = rand(g, 40, dtype=F64)
    sets.append(("a noisy step, n=40, keys in [0, 1], float64", keys,
                 (keys > 0.5).double() + 0.05 * randn(g, 40, dtype=F64)))
    keys = 1000 * rand(g, 50)
    sets.append(("a noisy sine, n=50, keys in [0, 1000], float32", keys,
                 torch.sin(keys / 100) + 0.3 * randn(g, 50)))
    keys = 0.05 * rand(g, 30, dtype=F64)
    sets.append(("a noisy cosine, n=30, keys in [0, 0.05], float64", keys,
                 torch.cos(200 * keys) + 0.1 * randn(g, 30, dtype=F64)))
    return sets


@SUITE.test("test-fit-bandwidth", seed=707)
def fit_bandwidth_cases(g):
    for name, keys, values in fit_datasets(g):
        yield Call(f"fit_bandwidth on {name}: the leave-one-out loss of the h it returns "
                   "must be within 1 % of the smallest", Helper("fitted_bandwidth"),
                   (Student("fit_bandwidth"), keys, values), check=fit_check(keys, values),
                   gradients=False)


def random_graph(g, N: int, p: float = 0.5, isolated=(), ring: bool = False) -> torch.Tensor:
    """A symmetric boolean adjacency matrix without self-loops; with ``ring``, every node
    (but the isolated ones) has a neighbour."""
    upper = torch.triu(torch.rand(N, N, generator=g) < p, diagonal=1)
    if ring and N > 1:
        nodes = torch.arange(N)
        upper[nodes, (nodes + 1) % N] = True
        upper = torch.triu(upper | upper.T, diagonal=1)
    adjacency = upper | upper.T
    adjacency.fill_diagonal_(False)
    for v in isolated:
        adjacency[v, :] = False
        adjacency[:, v] = False
    return adjacency


@SUITE.test("test-mean-aggregation", seed=808)
def mean_aggregation_cases(g):
    graphs = [("N=6, node 2 isolated", random_graph(g, 6, isolated=(2,))),
              ("N=5, dense", random_graph(g, 5, p=0.9)),
              ("N=7, nodes 0 and 6 isolated", random_graph(g, 7, isolated=(0, 6))),
              ("N=1 (no edge)", torch.zeros(1, 1, dtype=torch.bool)),
              ("N=4 without edges", torch.zeros(4, 4, dtype=torch.bool))]
    for name, adjacency in graphs:
        yield Call(f"mean_aggregation(adjacency), {name}", "mean_aggregation", (adjacency,),
                   expect=ref_mean_aggregation, gradients=False)
    adjacency = random_graph(g, 5, isolated=(4,))
    yield Call("mean_aggregation(adjacency, False), N=5, node 4 isolated", "mean_aggregation",
               (adjacency, False), expect=ref_mean_aggregation, gradients=False)
    yield Call("mean_aggregation(adjacency, self_loops=False), N=5, node 4 isolated",
               "mean_aggregation", (adjacency,), {"self_loops": False},
               expect=ref_mean_aggregation, gradients=False)


@SUITE.test("test-mean-aggregation-self-loops", seed=909)
def mean_aggregation_self_loop_cases(g):
    graphs = [("N=6, node 2 isolated", random_graph(g, 6, isolated=(2,))),
              ("N=5, dense", random_graph(g, 5, p=0.9)),
              ("N=1 (no edge)", torch.zeros(1, 1, dtype=torch.bool)),
              ("N=3 without edges", torch.zeros(3, 3, dtype=torch.bool))]
    for name, adjacency in graphs:
        yield Call(f"mean_aggregation(adjacency, True), {name}", "mean_aggregation",
                   (adjacency, True), expect=ref_mean_aggregation, gradients=False)
    adjacency = random_graph(g, 7, isolated=(1, 5))
    yield Call("mean_aggregation(adjacency, self_loops=True), N=7, nodes 1 and 5 isolated",
               "mean_aggregation", (adjacency,), {"self_loops": True},
               expect=ref_mean_aggregation, gradients=False)


@SUITE.test("test-dot-attention", seed=1010)
def dot_attention_cases(g):
    for N, M, scale, p, dtype in [(5, 4, 1.0, 0.4, F32), (6, 3, 1.0, 0.8, F32),
                                  (2, 5, 1.0, 0.5, F32), (4, 1, 1.0, 0.5, F64),
                                  (7, 6, 1.0, 0.3, F64), (5, 8, 20.0, 0.6, F32)]:
        adjacency = random_graph(g, N, p=p, ring=True)
        yield Call(f"dot_attention_aggregation, N={N}, M={M}, features of size ~{scale:g}, "
                   f"adjacency {bool_list(adjacency)}, {dtype}", "dot_attention_aggregation",
                   (scale * randn(g, N, M, dtype=dtype), adjacency),
                   expect=ref_dot_attention_aggregation)


@SUITE.test("test-dot-attention-isolated", seed=1111)
def dot_attention_isolated_cases(g):
    graphs = [(random_graph(g, 6, isolated=(3,), ring=True), 4, F32),
              (random_graph(g, 5, p=0.7, isolated=(0, 4), ring=True), 3, F64),
              (torch.zeros(1, 1, dtype=torch.bool), 3, F32),
              (torch.zeros(3, 3, dtype=torch.bool), 2, F64)]
    for adjacency, M, dtype in graphs:
        N = adjacency.shape[0]
        lonely = [v for v in range(N) if not adjacency[v].any()]
        yield Call(f"dot_attention_aggregation with nodes {lonely} without neighbours, N={N}, "
                   f"M={M}, adjacency {bool_list(adjacency)}, {dtype}",
                   "dot_attention_aggregation", (randn(g, N, M, dtype=dtype), adjacency),
                   expect=ref_dot_attention_aggregation)


@SUITE.test("test-aggregate", seed=1212)
def aggregate_cases(g):
    for N, M, K, weights_dtype, dtype in [(5, 4, 3, F32, F32), (4, 5, 4, F32, F64),
                                          (6, 2, 5, F64, F64), (1, 3, 2, F32, F32),
                                          (3, 1, 1, F32, F64)]:
        weights = torch.softmax(randn(g, N, N, dtype=weights_dtype), dim=1)
        yield Call(f"aggregate, N={N}, M={M}, K={K}, {weights_dtype} weights, {dtype} "
                   "features and W", "aggregate",
                   (weights, randn(g, N, M, dtype=dtype), randn(g, M, K, dtype=dtype)),
                   expect=ref_aggregate)
    weights = ref_mean_aggregation(random_graph(g, 5, isolated=(1,)))
    yield Call("aggregate with mean_aggregation's float32 weights (node 1 isolated), "
               "float64 features and W", "aggregate",
               (weights, randn(g, 5, 3, dtype=F64), randn(g, 3, 2, dtype=F64)),
               expect=ref_aggregate)
