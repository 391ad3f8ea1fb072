"""Hidden tests of `attention-scoring`: cases and reference answers (never released).

The grader builds these calls, ships only their inputs into the student's sandboxed kernel,
and compares what the kernel reports with the references below (see autograder.hidden).
The references are written as plain loops over the batch and the keys, unlike any
vectorised answer, so that a shared bug is unlikely.
"""

from __future__ import annotations

import torch

from autograder.hidden import Call, Helper, StandIn, Student, Suite
from autograder.hidden.probe import HELPERS

SUITE = Suite()
F32, F64 = torch.float32, torch.float64


# --------------------------------------------------------------------------- references


def ref_dot(query, keys):
    B, n, _ = keys.shape
    return torch.stack([torch.stack([torch.dot(query[b], keys[b, i]) for i in range(n)])
                        for b in range(B)])


def ref_scaled_dot(query, keys):
    B, n, d = keys.shape
    return torch.stack([torch.stack([torch.dot(query[b], keys[b, i]) / d ** 0.5
                                     for i in range(n)]) for b in range(B)])


def ref_general(query, keys, W):
    B, n, _ = keys.shape
    return torch.stack([torch.stack([query[b] @ W @ keys[b, i] for i in range(n)])
                        for b in range(B)])


def ref_concat(query, keys, W, v):
    B, n, _ = keys.shape
    return torch.stack([torch.stack([v @ torch.tanh(W @ torch.cat([query[b], keys[b, i]]))
                                     for i in range(n)]) for b in range(B)])


def ref_additive(query, keys, W_q, W_k, v):
    B, n, _ = keys.shape
    return torch.stack([torch.stack([v @ torch.tanh(W_q @ query[b] + W_k @ keys[b, i])
                                     for i in range(n)]) for b in range(B)])


def ref_masked_softmax(scores, mask=None):
    B, n = scores.shape
    rows = []
    for b in range(B):
        allowed = [i for i in range(n) if mask is None or bool(mask[b, i])]
        if not allowed:
            rows.append(scores[b] * 0)
            continue
        top = torch.stack([scores[b, i] for i in allowed]).max()
        exps = [torch.exp(scores[b, i] - top) if i in allowed else scores[b, i] * 0
                for i in range(n)]
        total = sum(exps[i] for i in allowed)
        rows.append(torch.stack([e / total for e in exps]))
    return torch.stack(rows)


def ref_attend(query, keys, values=None, score=None, mask=None):
    values = keys if values is None else values
    weights = ref_masked_softmax(score(query, keys), mask)
    context = torch.stack([sum(weights[b, i] * values[b, i] for i in range(keys.shape[1]))
                           for b in range(keys.shape[0])])
    return context, weights


# --------------------------------------------------------------------------- cases


def randn(g, *shape, dtype=F32):
    return torch.randn(*shape, generator=g, dtype=dtype)


@SUITE.test("test-dot-score", seed=101)
def dot_cases(g):
    for B, n, d, dtype in [(3, 5, 4, F32), (1, 1, 3, F32), (1, 4, 2, F64), (2, 7, 5, F64)]:
        yield Call(f"dot_score, B={B}, n={n}, d={d}, {dtype}", "dot_score",
                   (randn(g, B, d, dtype=dtype), randn(g, B, n, d, dtype=dtype)),
                   expect=ref_dot)


@SUITE.test("test-scaled-dot-score", seed=202)
def scaled_dot_cases(g):
    for B, n, d, dtype in [(3, 4, 7, F32), (2, 9, 5, F32), (1, 1, 6, F32), (2, 3, 11, F64)]:
        yield Call(f"scaled_dot_score, B={B}, n={n}, d={d}, {dtype}", "scaled_dot_score",
                   (randn(g, B, d, dtype=dtype), randn(g, B, n, d, dtype=dtype)),
                   expect=ref_scaled_dot)


@SUITE.test("test-general-score", seed=303)
def general_cases(g):
    for B, n, dq, dk, dtype in [(3, 5, 3, 6, F32), (2, 4, 5, 5, F32), (1, 1, 4, 2, F32),
                                (2, 3, 6, 4, F64)]:
        yield Call(f"general_score, B={B}, n={n}, d_q={dq}, d_k={dk}, {dtype}",
                   "general_score",
                   (randn(g, B, dq, dtype=dtype), randn(g, B, n, dk, dtype=dtype),
                    randn(g, dq, dk, dtype=dtype)),
                   expect=ref_general)


@SUITE.test("test-concat-score", seed=404)
def concat_cases(g):
    for B, n, dq, dk, h, dtype in [(3, 5, 3, 6, 4, F32), (2, 4, 5, 5, 3, F32),
                                   (1, 1, 2, 3, 5, F32), (2, 3, 4, 2, 6, F64)]:
        yield Call(f"concat_score, B={B}, n={n}, d_q={dq}, d_k={dk}, h={h}, {dtype}",
                   "concat_score",
                   (randn(g, B, dq, dtype=dtype), randn(g, B, n, dk, dtype=dtype),
                    randn(g, h, dq + dk, dtype=dtype), randn(g, h, dtype=dtype)),
                   expect=ref_concat)


@SUITE.test("test-additive-score", seed=505)
def additive_cases(g):
    for B, n, dq, dk, h, dtype in [(3, 5, 3, 6, 4, F32), (2, 4, 5, 5, 3, F32),
                                   (1, 1, 2, 3, 5, F32), (2, 3, 4, 2, 6, F64)]:
        yield Call(f"additive_score, B={B}, n={n}, d_q={dq}, d_k={dk}, h={h}, {dtype}",
                   "additive_score",
                   (randn(g, B, dq, dtype=dtype), randn(g, B, n, dk, dtype=dtype),
                    randn(g, h, dq, dtype=dtype), randn(g, h, dk, dtype=dtype),
                    randn(g, h, dtype=dtype)),
                   expect=ref_additive)


@SUITE.test("test-masked-softmax-no-mask", seed=606)
def softmax_cases(g):
    for B, n, scale, dtype in [(3, 5, 1.0, F32), (1, 1, 1.0, F32), (1, 4, 3.0, F32),
                               (2, 6, 1000.0, F32), (3, 4, 2.0, F64)]:
        yield Call(f"masked_softmax without a mask, B={B}, n={n}, scores of size ~{scale}, "
                   f"{dtype}", "masked_softmax", (scale * randn(g, B, n, dtype=dtype),),
                   expect=ref_masked_softmax)


@SUITE.test("test-masked-softmax-mask", seed=707)
def masked_cases(g):
    lengths = torch.tensor([1, 3, 5, 2, 4])                      # prefix masks of every length
    prefix = torch.arange(5).unsqueeze(0) < lengths.unsqueeze(1)
    scattered = torch.tensor([[False, True, False, True, True],
                              [True, False, False, False, True]])
    for mask, dtype in [(prefix, F32), (scattered, F32), (torch.tensor([[True]]), F32),
                        (prefix, F64), (torch.tensor([[False, True, True]]), F64)]:
        yield Call(f"masked_softmax with mask {mask.int().tolist()}, {dtype}",
                   "masked_softmax", (3 * randn(g, *mask.shape, dtype=dtype), mask),
                   expect=ref_masked_softmax)
    yield Call("masked_softmax with a mask and scores near 1000", "masked_softmax",
               (torch.full((2, 5), 1000.0) + randn(g, 2, 5), prefix[:2]),
               expect=ref_masked_softmax)


@SUITE.test("test-masked-softmax-fully-masked", seed=808)
def fully_masked_cases(g):
    for mask, dtype in [(torch.tensor([[True, False, True], [False, False, False],
                                       [False, True, False]]), F32),
                        (torch.tensor([[False, False, False, False]]), F32),
                        (torch.tensor([[False], [True]]), F64)]:
        yield Call(f"masked_softmax with a fully masked row, mask {mask.int().tolist()}, "
                   f"{dtype}", "masked_softmax", (randn(g, *mask.shape, dtype=dtype), mask),
                   expect=ref_masked_softmax)


def attend_call(label, query, keys, values, score: str, mask):
    """`attend` with a helper score; its masked_softmax is replaced by one that returns the
    right weights, so a softmax bug is graded by the softmax tests alone."""
    scores = Helper(score)
    expected_scores = ref_attend_scores(score, query, keys)
    weights = ref_masked_softmax(expected_scores, mask)
    return Call(label, "attend", (query, keys, values, scores, mask), expect=ref_attend,
                inline=ref_attend,
                stand_ins={"masked_softmax": StandIn((expected_scores, mask), weights,
                                                     jvp="softmax")})


def ref_attend_scores(score: str, query, keys):
    return HELPERS[score](query, keys).detach()


@SUITE.test("test-attend-key-value", seed=909)
def attend_key_value_cases(g):
    for B, n, d, dv, dtype in [(3, 5, 4, 6, F32), (1, 1, 3, 2, F32), (1, 4, 2, 5, F32),
                               (2, 3, 5, 1, F64)]:
        yield attend_call(f"attend in key-value mode, B={B}, n={n}, d={d}, d_v={dv}, {dtype}",
                          randn(g, B, d, dtype=dtype), randn(g, B, n, d, dtype=dtype),
                          randn(g, B, n, dv, dtype=dtype), "sum_product", None)


@SUITE.test("test-attend-plain", seed=1010)
def attend_plain_cases(g):
    for B, n, d, dtype in [(3, 5, 4, F32), (1, 1, 3, F32), (2, 3, 6, F64)]:
        q, k = randn(g, B, d, dtype=dtype), randn(g, B, n, d, dtype=dtype)
        yield attend_call(f"attend in plain mode, B={B}, n={n}, d={d}, {dtype}",
                          q, k, None, "neg_sq_distance", None)
        # The default scorer is the student's own dot_score, whatever it computes.
        explicit = f"attend(query, keys, None, dot_score), B={B}, n={n}, {dtype}"
        yield Call(explicit, "attend", (q, k, None, Student("dot_score")), gradients=False)
        yield Call(f"attend's default score must be dot_score, B={B}, n={n}, {dtype}",
                   "attend", (q, k), same_as=explicit, gradients=False)


@SUITE.test("test-attend-mask-and-score", seed=1111)
def attend_mask_cases(g):
    full = torch.tensor([[True, True, True, False, False], [False, False, False, False, False],
                         [True, False, True, True, True], [True, True, True, True, True]])
    for mask, dv, dtype in [(full, 3, F32), (full[1:2], 2, F32), (full[2:], 4, F64),
                            (None, 3, F64)]:
        B, n = (3, 5) if mask is None else mask.shape
        for values in [randn(g, B, n, dv, dtype=dtype), None]:
            mode = "key-value" if values is not None else "plain"
            shown = None if mask is None else mask.int().tolist()
            yield attend_call(f"attend with a custom score and mask {shown}, {mode} mode, "
                              f"{dtype}", randn(g, B, 4, dtype=dtype),
                              randn(g, B, n, 4, dtype=dtype), values, "neg_sq_distance", mask)
    # With its own masked_softmax, an example with nothing to attend gets zero weights and
    # a zero context.
    query, keys, values = randn(g, 2, 3), randn(g, 2, 4, 3), randn(g, 2, 4, 2)
    mask = torch.tensor([[True, False, True, False], [False] * 4])
    yield Call("attend with its own masked_softmax and a fully masked example", "attend",
               (query, keys, values, Helper("sum_product"), mask), expect=ref_attend)
