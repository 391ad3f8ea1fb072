"""Hidden tests of `multihead-attention`: cases and reference answers (never released).

The grader builds these calls, ships only their inputs (and reference ``state_dict`` s) into
the student's sandboxed kernel, and compares what the kernel reports with the references
below (see autograder.hidden). Two references are written independently of the solution:

- ``ref_attention`` works one query at a time: a softmax over exactly the keys that query
  may attend, written out with ``exp``; ``LoopMHA`` runs it head by head with slices of the
  projection weights and *sums* the heads' contributions through their slices of
  ``out_proj`` (no concatenation, no reshape);
- ``TorchMHA`` is ``torch.nn.MultiheadAttention`` itself, bound to the same parameters
  (its masks inverted), with the contract's rule for queries with nothing to attend
  applied on top: zero weights and ``out_proj``'s bias as output, where torch gives NaN.

Parts are graded on their own: ``MultiHeadAttention.forward`` runs with a stand-in
``scaled_dot_product_attention`` that returns the right per-head result for any correct way
of calling it (all heads at once, heads folded into the batch, head by head, or one
example and head at a time), so a bug in the student's attention costs only that
function's marks. The end-to-end cell runs the student's module on their own attention,
with gradients to the inputs and every parameter.
"""

from __future__ import annotations

import math

import numpy as np
import torch
from torch import nn

from autograder.hidden import Call, Helper, Module, StandIn, Suite

from probe_helpers import head_sizes

SUITE = Suite()
F32, F64 = torch.float32, torch.float64
PROJECTIONS = ("q_proj", "k_proj", "v_proj", "out_proj")


# --------------------------------------------------------------------------- references


def ref_attention(Q, K, V, mask=None):
    """Q (..., T, d_k), K (..., S, d_k), V (..., S, d_v), mask broadcastable to (..., T, S)
    -> out (..., T, d_v), weights (..., T, S), one query at a time."""
    *lead, T, d_k = Q.shape
    S, d_v = K.shape[-2], V.shape[-1]
    allowed = torch.ones(*lead, T, S, dtype=torch.bool) if mask is None \
        else torch.broadcast_to(mask, (*lead, T, S))
    q, k, v = Q.reshape(-1, T, d_k), K.reshape(-1, S, d_k), V.reshape(-1, S, d_v)
    allowed = allowed.reshape(-1, T, S)
    outs, rows = [], []
    for n in range(q.shape[0]):
        for t in range(T):
            keep = allowed[n, t].nonzero().flatten()
            row = 0.0 * k[n, :, 0]                 # (S,) zeros (tied to the inputs)
            if len(keep) == 0:                       # nothing to attend: zeros, not NaN
                outs.append(0.0 * v[n, 0])
                rows.append(row)
                continue
            scores = (k[n, keep] @ q[n, t]) / math.sqrt(d_k)        # (kept,)
            exps = torch.exp(scores - scores.max().detach())
            probabilities = exps / exps.sum()
            row = row.index_put((keep,), probabilities)
            outs.append(probabilities @ v[n, keep])
            rows.append(row)
    return (torch.stack(outs).reshape(*lead, T, d_v),
            torch.stack(rows).reshape(*lead, T, S))


class _Projections(nn.Module):
    """The contract's attributes: q_proj, k_proj, v_proj, out_proj, num_heads, head_dim."""

    def __init__(self, d_model, num_heads, bias=True):
        nn.Module.__init__(self)
        self.num_heads, self.head_dim = num_heads, d_model // num_heads
        for name in PROJECTIONS:
            setattr(self, name, nn.Linear(d_model, d_model, bias=bias))

    def head_projection(self, name, x, h):
        """x (B, L, d_model) through head h's rows of projection ``name`` -> (B, L, d_h)."""
        layer, rows = getattr(self, name), slice(h * self.head_dim, (h + 1) * self.head_dim)
        out = x @ layer.weight[rows].T
        return out if layer.bias is None else out + layer.bias[rows]


class LoopMHA(_Projections):
    """Head by head; the output is the sum of each head's output times its columns of
    out_proj (plus the bias). ``skip_heads`` leaves heads out of that sum."""

    def forward(self, query, key, value, mask=None, skip_heads=()):
        out = self.out_proj.bias if self.out_proj.bias is not None \
            else query.new_zeros(query.shape[-1])
        weights = []
        for h in range(self.num_heads):
            head, w = ref_attention(self.head_projection("q_proj", query, h),
                                    self.head_projection("k_proj", key, h),
                                    self.head_projection("v_proj", value, h), mask)
            if h not in skip_heads:
                columns = slice(h * self.head_dim, (h + 1) * self.head_dim)
                out = out + head @ self.out_proj.weight[:, columns].T      # (B, T, d_model)
            weights.append(w)
        return out.expand(*query.shape[:-1], -1), torch.stack(weights, dim=1)


class TorchMHA(_Projections):
    """torch.nn.MultiheadAttention bound to these parameters, masks inverted; a query with
    nothing to attend gets zero weights and out_proj's bias (torch gives NaN)."""

    def forward(self, query, key, value, mask=None):
        B, T, d_model = query.shape
        S, H = key.shape[1], self.num_heads
        biased = self.q_proj.bias is not None
        torch_mha = nn.MultiheadAttention(d_model, H, bias=biased, batch_first=True,
                                          dtype=query.dtype).eval()
        del torch_mha.in_proj_weight
        torch_mha.in_proj_weight = torch.cat([self.q_proj.weight, self.k_proj.weight,
                                              self.v_proj.weight])      # (3 d_model, d_model)
        if biased:
            del torch_mha.in_proj_bias
            torch_mha.in_proj_bias = torch.cat([self.q_proj.bias, self.k_proj.bias,
                                                self.v_proj.bias])
        torch_mha.out_proj.weight, torch_mha.out_proj.bias = \
            self.out_proj.weight, self.out_proj.bias
        masks, empty = {}, None
        if mask is not None:
            allowed = torch.broadcast_to(mask, (B, T, S))
            empty = ~allowed.any(dim=-1)                                    # (B, T)
            if empty.any():      # let those queries attend everything, then fix them below
                allowed = allowed | empty.unsqueeze(-1)
                masks["attn_mask"] = (~allowed).repeat_interleave(H, dim=0)   # (B*H, T, S)
            elif mask.dim() == 2:
                masks["attn_mask"] = ~mask                                  # causal (T, S)
            elif mask.shape[1] == 1:
                masks["key_padding_mask"] = ~mask[:, 0]                     # padding (B, S)
            else:
                masks["attn_mask"] = (~mask).repeat_interleave(H, dim=0)
        out, weights = torch_mha(query, key, value, need_weights=True,
                                 average_attn_weights=False, **masks)
        if empty is not None and empty.any():
            weights = weights.masked_fill(empty[:, None, :, None], 0.0)
            fixed = self.out_proj.bias if biased else out.new_zeros(d_model)
            out = torch.where(empty.unsqueeze(-1), fixed.expand_as(out), out)
        return out, weights


def forward(module, *args):
    return module(*args)


# --------------------------------------------------------------------------- inputs


def randn(g, *shape, dtype=F32):
    return torch.randn(*shape, generator=g, dtype=dtype)


def random_state(g, d_model, bias=True, dtype=F32):
    """Projection weights with entries of variance 1/d_model: scores of unit scale."""
    state = {}
    for name in PROJECTIONS:
        state[f"{name}.weight"] = randn(g, d_model, d_model, dtype=dtype) / math.sqrt(d_model)
        if bias:
            state[f"{name}.bias"] = 0.5 * randn(g, d_model, dtype=dtype)
    return state


def random_mask(g, *shape, p=0.6):
    return torch.rand(*shape, generator=g) < p


def with_some_key(mask):
    """Make sure every query of ``mask`` (..., T, S) may attend at least one key."""
    mask = mask.clone()
    empty = ~mask.any(dim=-1)
    mask[..., 0] |= empty
    return mask


def prefix_mask(lengths, S):
    return torch.tensor([[s < n for s in range(S)] for n in lengths])


def shown(mask):
    return "no mask" if mask is None else f"mask {tuple(mask.shape)}"


# --------------------------------------------------------------------------- stand-ins


def attention_stand_in(state, num_heads, query, key, value, mask=None):
    """A stand-in for scaled_dot_product_attention inside MultiHeadAttention.forward: the
    right per-head (out, weights) for each correct way of calling it."""
    reference = LoopMHA(query.shape[-1], num_heads, "q_proj.bias" in state).to(query.dtype)
    reference.load_state_dict(state)
    B, T, S, H = query.shape[0], query.shape[1], key.shape[1], num_heads
    q, k, v = (torch.stack([reference.head_projection(name, x, h) for h in range(H)], 1).detach()
               for name, x in (("q_proj", query), ("k_proj", key), ("v_proj", value)))
    full = None if mask is None else torch.broadcast_to(mask, (B, T, S))          # (B, T, S)
    heads_mask = None if full is None else full.unsqueeze(1).expand(B, H, T, S)
    out, weights = (r.detach() for r in ref_attention(q, k, v, heads_mask))  # (B,H,T,d_h|S)

    def fold(x):
        return None if x is None else x.reshape(B * H, *x.shape[2:])

    table = [((q, k, v, heads_mask), (out, weights)),                      # (B, H, L, d_h)
             ((fold(q), fold(k), fold(v), fold(heads_mask)), (fold(out), fold(weights)))]
    table += [((q[:, h], k[:, h], v[:, h], full), (out[:, h], weights[:, h]))
              for h in range(H)]                                           # head by head
    table += [((q[b, h], k[b, h], v[b, h], None if full is None else full[b]),
               (out[b, h], weights[b, h])) for b in range(B) for h in range(H)]
    return {"scaled_dot_product_attention": StandIn(table=tuple(
        (tuple(_own(a) for a in args), tuple(_own(r) for r in result))
        for args, result in table))}


def _own(x):
    """A compact copy of a tensor (a view would ship its whole storage)."""
    return None if x is None else x.contiguous().clone()


# --------------------------------------------------------------------------- cases


@SUITE.test("test-sdpa", seed=101)
def sdpa_cases(g):
    shapes = [((2, 3, 4), (2, 5, 4), (2, 5, 6), F32),          # T != S, d_k != d_v
              ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 2), F32),  # (B, H, T, d_k)
              ((3, 4), (5, 4), (5, 3), F32),                    # no batch dimension
              ((1, 1, 5), (1, 1, 5), (1, 1, 2), F32),           # B = T = S = 1
              ((1, 4, 7), (1, 2, 7), (1, 2, 7), F32),
              ((2, 2, 3, 5), (2, 2, 4, 5), (2, 2, 4, 3), F64),
              ((2, 3, 3), (2, 3, 3), (2, 3, 3), F64)]
    for q, k, v, dtype in shapes:
        yield Call(f"scaled_dot_product_attention, Q {q}, K {k}, V {v}, {dtype}",
                   "scaled_dot_product_attention",
                   (randn(g, *q, dtype=dtype), randn(g, *k, dtype=dtype),
                    randn(g, *v, dtype=dtype)), expect=ref_attention)
    yield Call("scaled_dot_product_attention with large scores (Q and K of size ~6)",
               "scaled_dot_product_attention",
               (6 * randn(g, 2, 3, 4), 6 * randn(g, 2, 5, 4), randn(g, 2, 5, 3)),
               expect=ref_attention)
    yield Call("scaled_dot_product_attention(Q, K, V, None)", "scaled_dot_product_attention",
               (randn(g, 2, 3, 4), randn(g, 2, 4, 4), randn(g, 2, 4, 2), None),
               expect=ref_attention)


@SUITE.test("test-sdpa-mask", seed=202)
def sdpa_mask_cases(g):
    B, H, T, S = 2, 3, 4, 5
    causal = torch.tensor([[s <= t for s in range(4)] for t in range(4)])
    cases = [
        ("a (T, S) mask with (B, H, T, d_k) inputs", (B, H, T, 6), (B, H, S, 6), (B, H, S, 3),
         with_some_key(random_mask(g, T, S)), F32),
        ("a causal (T, T) mask", (B, H, 4, 6), (B, H, 4, 6), (B, H, 4, 6), causal, F32),
        ("a padding mask (B, 1, S)", (B, T, 6), (B, S, 6), (B, S, 2),
         prefix_mask([2, 5], S).unsqueeze(1), F32),
        ("a padding mask (B, 1, 1, S)", (B, H, T, 6), (B, H, S, 6), (B, H, S, 2),
         prefix_mask([3, 1], S)[:, None, None], F32),
        ("a full (B, T, S) mask", (B, T, 6), (B, S, 6), (B, S, 4),
         with_some_key(random_mask(g, B, T, S)), F32),
        ("a full (B, H, T, S) mask", (B, H, T, 2), (B, H, S, 2), (B, H, S, 5),
         with_some_key(random_mask(g, B, H, T, S)), F32),
        ("a (B, 1, T, S) mask", (B, H, T, 3), (B, H, S, 3), (B, H, S, 3),
         with_some_key(random_mask(g, B, 1, T, S)), F32),
        ("a key mask (S,)", (B, T, 4), (B, S, 4), (B, S, 4), prefix_mask([3], S)[0], F32),
        ("one key allowed, B = 1", (1, 3, 4), (1, 1, 4), (1, 1, 2),
         torch.ones(1, 3, 1, dtype=torch.bool), F32),
        ("a full (B, T, S) mask in float64", (B, T, 5), (B, S, 5), (B, S, 3),
         with_some_key(random_mask(g, B, T, S)), F64),
        ("a padding mask (B, 1, S) in float64", (3, 2, 4), (3, S, 4), (3, S, 4),
         prefix_mask([1, 4, 5], S).unsqueeze(1), F64),
    ]
    for what, q, k, v, mask, dtype in cases:
        yield Call(f"scaled_dot_product_attention with {what}, Q {q}, K {k}, {dtype}",
                   "scaled_dot_product_attention",
                   (randn(g, *q, dtype=dtype), randn(g, *k, dtype=dtype),
                    randn(g, *v, dtype=dtype), mask), expect=ref_attention)
    yield Call("scaled_dot_product_attention with a mask and large scores",
               "scaled_dot_product_attention",
               (8 * randn(g, 2, 3, 4), 8 * randn(g, 2, 5, 4), randn(g, 2, 5, 3),
                with_some_key(random_mask(g, 2, 3, 5))), expect=ref_attention)
    yield Call("scaled_dot_product_attention with a mask given by keyword",
               "scaled_dot_product_attention",
               (randn(g, 2, 3, 4), randn(g, 2, 5, 4), randn(g, 2, 5, 3)),
               {"mask": prefix_mask([4, 2], 5).unsqueeze(1)}, expect=ref_attention)


@SUITE.test("test-sdpa-fully-masked", seed=303)
def sdpa_fully_masked_cases(g):
    rows = torch.tensor([[True, False, True, False], [False] * 4, [True] * 4])     # (T, S)
    cases = [
        ("one query with nothing to attend, (T, S) mask", (2, 3, 4), (2, 4, 4), (2, 4, 3),
         rows, F32),
        ("queries with nothing to attend, (B, T, S) mask", (2, 3, 5), (2, 4, 5), (2, 4, 2),
         torch.stack([rows, rows.flip(0)]), F32),
        ("an example with nothing to attend, (B, 1, S) mask", (2, 3, 4), (2, 4, 4), (2, 4, 2),
         torch.tensor([[[True, True, False, False]], [[False] * 4]]), F32),
        ("everything masked, (B, H, T, S) inputs", (1, 2, 3, 4), (1, 2, 4, 4), (1, 2, 4, 3),
         torch.zeros(3, 4, dtype=torch.bool), F32),
        ("queries with nothing to attend, float64", (2, 2, 3, 4), (2, 2, 4, 4),
         (2, 2, 4, 5), torch.stack([rows, rows.flip(0)]).unsqueeze(1), F64),
    ]
    for what, q, k, v, mask, dtype in cases:
        yield Call(f"scaled_dot_product_attention with {what}, {dtype}",
                   "scaled_dot_product_attention",
                   (randn(g, *q, dtype=dtype), randn(g, *k, dtype=dtype),
                    randn(g, *v, dtype=dtype), mask), expect=ref_attention)


def ref_causal_mask(T, device=None):
    return torch.tensor([[j <= i for j in range(T)] for i in range(T)], dtype=torch.bool)


def ref_padding_mask(lengths, S):
    return torch.tensor([[s < int(n) for s in range(S)] for n in lengths], dtype=torch.bool)


@SUITE.test("test-causal-mask", seed=404)
def causal_mask_cases(g):
    for T in (1, 2, 3, 7):
        yield Call(f"causal_mask({T})", "causal_mask", (T,), expect=ref_causal_mask,
                   gradients=False)
    yield Call("causal_mask(5, device='cpu')", "causal_mask", (5,), {"device": "cpu"},
               expect=ref_causal_mask, gradients=False)
    yield Call("causal_mask(4, None)", "causal_mask", (4, None), expect=ref_causal_mask,
               gradients=False)


@SUITE.test("test-padding-mask", seed=505)
def padding_mask_cases(g):
    for lengths, S in [([3, 1, 5], 5), ([1], 1), ([2, 4, 4, 1], 6), ([2], 3),
                       ([7, 3], 7)]:
        yield Call(f"padding_mask(lengths={lengths}, S={S})", "padding_mask",
                   (torch.tensor(lengths), S), expect=ref_padding_mask, gradients=False)


def _module(d_model, H, bias, state, dtype=F32, reference=TorchMHA):
    init = (d_model, H) if bias else (d_model, H, False)
    return Module("MultiHeadAttention", init, state, reference,
                  dtype=None if dtype == F32 else dtype)


@SUITE.test("test-mha-init", seed=606)
def mha_init_cases(g):
    for d_model, H, bias in [(12, 3, True), (8, 8, True), (6, 1, True), (16, 4, False)]:
        module = _module(d_model, H, bias, random_state(g, d_model, bias))
        yield Call(f"MultiHeadAttention{module.init}: num_heads, head_dim, and q_proj, k_proj, "
                   f"v_proj, out_proj of shape ({d_model}, {d_model})"
                   f"{'' if bias else ' without biases'} (loaded with strict=True)",
                   Helper("head_sizes"), (module,), expect=head_sizes, gradients=False)
    for d_model, H in [(10, 3), (12, 5), (4, 8)]:
        yield Call(f"MultiHeadAttention({d_model}, {H}) must raise ValueError",
                   "MultiHeadAttention", (d_model, H), expect_error="ValueError")


def mha_call(label, g, d_model, H, B, T, S, mask=None, bias=True, dtype=F32, stand_in=True,
             reference=TorchMHA, self_attention=False):
    state = random_state(g, d_model, bias, dtype)
    query = randn(g, B, T, d_model, dtype=dtype)
    key = query if self_attention else randn(g, B, S, d_model, dtype=dtype)
    value = query if self_attention else randn(g, B, S, d_model, dtype=dtype)
    args = (query, key, value) if mask is None else (query, key, value, mask)
    sizes = (f"d_model={d_model}, heads={H}, B={B}, T={T}, S={S}, {shown(mask)}"
             f"{'' if bias else ', bias=False'}, {dtype}")
    return Call(f"{label} ({sizes})", "forward", args, expect=forward, inline=forward,
                instance=_module(d_model, H, bias, state, dtype, reference),
                stand_ins=attention_stand_in(state, H, *args) if stand_in else {},
                gradients=not stand_in)


@SUITE.test("test-mha-forward", seed=707)
def mha_forward_cases(g):
    label = "MultiHeadAttention.forward vs nn.MultiheadAttention with the same weights"
    for d_model, H, B, T, S, bias, dtype, self_attention in [
            (12, 3, 2, 4, 4, True, F32, True), (8, 2, 1, 3, 5, True, F32, False),
            (16, 4, 3, 5, 2, False, F32, False), (6, 1, 2, 3, 3, True, F32, False),
            (4, 4, 2, 2, 3, True, F32, False), (8, 4, 2, 3, 4, True, F64, False),
            (12, 6, 1, 1, 1, False, F64, True), (32, 8, 2, 6, 7, True, F32, False)]:
        yield mha_call(label + (", self-attention" if self_attention else ""), g, d_model, H,
                       B, T, S, bias=bias, dtype=dtype, self_attention=self_attention)


@SUITE.test("test-mha-masks", seed=808)
def mha_mask_cases(g):
    label = "MultiHeadAttention.forward with a mask vs nn.MultiheadAttention"
    causal = torch.tensor([[s <= t for s in range(5)] for t in range(5)])
    yield mha_call(label + ", causal (T, T)", g, 12, 3, 2, 5, 5, causal, self_attention=True)
    yield mha_call(label + ", (T, S)", g, 8, 2, 3, 3, 4, with_some_key(random_mask(g, 3, 4)))
    yield mha_call(label + ", padding (B, 1, S)", g, 12, 4, 3, 4, 5,
                   prefix_mask([5, 2, 3], 5).unsqueeze(1))
    yield mha_call(label + ", padding (B, 1, S) with B = heads", g, 8, 2, 2, 3, 4,
                   prefix_mask([4, 1], 4).unsqueeze(1), bias=False)
    yield mha_call(label + ", padding (B, 1, S), B = 1", g, 8, 4, 1, 2, 3,
                   prefix_mask([2], 3).unsqueeze(1))
    yield mha_call(label + ", full (B, T, S)", g, 16, 4, 2, 3, 6,
                   with_some_key(random_mask(g, 2, 3, 6)), dtype=F64)
    yield mha_call(label + ", full (B, T, S) with B = heads", g, 9, 3, 3, 4, 4,
                   with_some_key(random_mask(g, 3, 4, 4)))
    empty = torch.tensor([[[True, False, True], [False, False, False]],
                          [[False, False, False], [True, True, True]]])
    yield mha_call("MultiHeadAttention.forward: a query with nothing to attend gets zero "
                   "weights and out_proj's bias as output", g, 8, 2, 2, 2, 3, empty)
    yield mha_call("MultiHeadAttention.forward: a query with nothing to attend, bias=False",
                   g, 6, 3, 2, 2, 3, empty, bias=False, dtype=F64)


def skipping(original, head):
    """The output of ``original`` without ``head``'s contribution (the reference ignores
    the module it is given: ``original`` has the weights before the head was zeroed)."""
    return lambda _, *args: original(*args, skip_heads=(head,))


@SUITE.test("test-mha-heads", seed=909)
def mha_heads_cases(g):
    label = "MultiHeadAttention.forward vs a loop over heads with slices of the weights"
    for d_model, H, B, T, S, mask in [
            (12, 3, 2, 3, 4, None), (16, 8, 1, 4, 4, None), (8, 2, 3, 2, 5, None),
            (12, 4, 2, 4, 3, with_some_key(random_mask(g, 2, 4, 3)))]:
        yield mha_call(label, g, d_model, H, B, T, S, mask, reference=LoopMHA)
    for d_model, H, B, T, S, head, bias in [(12, 3, 2, 3, 4, 1, True),
                                            (8, 4, 1, 2, 3, 0, False),
                                            (8, 4, 2, 3, 3, 3, True)]:
        state = random_state(g, d_model, bias)
        original = LoopMHA(d_model, H, bias)
        original.load_state_dict(state)
        columns = slice(head * d_model // H, (head + 1) * d_model // H)
        state["out_proj.weight"][:, columns] = 0.0
        args = (randn(g, B, T, d_model), randn(g, B, S, d_model), randn(g, B, S, d_model))
        yield Call(f"MultiHeadAttention.forward with head {head}'s columns of out_proj set to "
                   f"zero: the output loses exactly head {head}'s contribution "
                   f"(d_model={d_model}, heads={H}, B={B}, T={T}, S={S})", "forward", args,
                   expect=skipping(original, head), inline=skipping(original, head),
                   instance=_module(d_model, H, bias, state, reference=LoopMHA),
                   stand_ins=attention_stand_in(state, H, *args), gradients=False)


@SUITE.test("test-mha-end-to-end", seed=1010)
def mha_end_to_end_cases(g):
    label = "MultiHeadAttention with your scaled_dot_product_attention vs nn.MultiheadAttention"
    causal = torch.tensor([[s <= t for s in range(4)] for t in range(4)])
    for d_model, H, B, T, S, mask, bias, dtype in [
            (12, 3, 2, 4, 5, None, True, F32),
            (8, 2, 1, 4, 4, causal, True, F32),
            (16, 4, 3, 3, 5, prefix_mask([5, 1, 3], 5).unsqueeze(1), False, F32),
            (12, 4, 2, 3, 4, torch.tensor([[[True, False, True, True], [False] * 4,
                                             [False, True, False, False]],
                                            [[True] * 4, [False, False, True, False],
                                             [False] * 4]]), True, F32),
            (8, 4, 2, 3, 2, with_some_key(random_mask(g, 2, 3, 2)), True, F64)]:
        yield mha_call(f"{label}, with gradients", g, d_model, H, B, T, S, mask, bias=bias,
                       dtype=dtype, stand_in=False)
    # Self-attention without positions treats the sequence as a set: permuting the
    # positions permutes the results in the same way.
    d_model, H, B, T = 12, 3, 2, 5
    state = random_state(g, d_model)
    module = _module(d_model, H, True, state)
    x = randn(g, B, T, d_model)
    plain = f"self-attention on x (d_model={d_model}, heads={H}, B={B}, T={T})"
    yield Call(plain, Helper("self_attention"), (module, x),
               expect=lambda m, x: m(x, x, x), gradients=False)
    order = torch.randperm(T, generator=g)
    yield Call(f"self-attention is permutation-equivariant: positions reordered by "
               f"{order.tolist()} give the same results, reordered", Helper(
                   "self_attention_permuted"), (module, x, order), same_as=plain,
               gradients=False)


def pe_check(max_len, d_model):
    """Judge a positional encoding against the formula computed in float64. A float32
    computation may differ by a few units in the last place of the angle, which grows
    with the position: the tolerance does too."""
    position = np.arange(max_len, dtype=np.float64)[:, None]
    two_i = np.arange(0, d_model, 2, dtype=np.float64)
    angles = position / 10000.0 ** (two_i / d_model)
    want = np.empty((max_len, d_model))
    want[:, 0::2], want[:, 1::2] = np.sin(angles), np.cos(angles)
    tolerance = 1e-5 + 2e-6 * position

    def check(outputs):
        if len(outputs) != 1:
            return f"expected one tensor, got {len(outputs)} results"
        (pe,) = outputs
        if pe.dtype != np.float32:
            return f"expected dtype float32, got {pe.dtype}"
        if pe.shape != want.shape:
            return f"expected shape {want.shape}, got {pe.shape}"
        difference = np.abs(pe.astype(np.float64) - want)
        if not np.all(difference <= tolerance):          # NaN fails too
            p, c = np.unravel_index(np.nanargmax(np.where(np.isnan(difference), np.inf,
                                                          difference - tolerance)), want.shape)
            return (f"PE[{p}, {c}] should be {want[p, c]:.6f}, got {float(pe[p, c]):.6f} "
                    f"(largest difference {np.nanmax(difference):.3g})")
        return None
    return check


@SUITE.test("test-positional-encoding", seed=1111)
def positional_encoding_cases(g):
    for max_len, d_model in [(1, 2), (6, 4), (50, 16), (128, 64), (3, 512)]:
        yield Call(f"sinusoidal_positional_encoding({max_len}, {d_model})",
                   "sinusoidal_positional_encoding", (max_len, d_model),
                   check=pe_check(max_len, d_model), gradients=False)
