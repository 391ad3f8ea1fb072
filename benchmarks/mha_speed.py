"""The reference solution of `multihead-attention` against PyTorch's own, on the CPU.

Takes ``scaled_dot_product_attention`` and ``MultiHeadAttention`` from the solution's source
(the notebook's code cells, answers filled in, executed here), and times them against
``torch.nn.functional.scaled_dot_product_attention`` and ``torch.nn.MultiheadAttention``
with the same weights, in one run: warm-up calls, then ``--repeat`` rounds that alternate
the two sides, and the medians. Both sides return the attention weights where PyTorch can
(``nn.MultiheadAttention(need_weights=True, average_attn_weights=False)``); torch's fused
``scaled_dot_product_attention`` cannot, so that row compares a function that returns them
with one that does not. Everything runs in inference mode (no autograd), one thread.

What to expect: the reference stays within 1.5x of ``nn.MultiheadAttention`` except for
long unmasked self-attention (T = 512), where ``nn.MultiheadAttention`` in inference mode
takes its "fast path", one fused native kernel (``_native_multi_head_attention``) whose
softmax works in place; the reference allocates the (B, H, T, S) weights afresh, and at
33 MB per tensor the fresh pages cost as much as the arithmetic. With a mask (no fast path)
or with autograd on, the two do the same bmm, softmax, bmm. Torch's fused
``scaled_dot_product_attention`` never forms the weights at all, which the contract asks
for, so it stays ahead at every size.

    python benchmarks/mha_speed.py [--repeat 15] [--threads 1]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import itertools
import statistics
import time
from pathlib import Path

import torch
from torch import nn

from autograder.proving.dryrun import answered_notebook

SOLUTION = Path(__file__).resolve().parent.parent / "solutions" / "multihead-attention"
SIZES = [(B, T, d_model, heads) for B, T in itertools.product((1, 8), (16, 128, 512))
         for d_model, heads in ((64, 4), (256, 8))]
TARGET = 1.5           # the reference may be at most this much slower than PyTorch


def solution_namespace() -> dict:
    """The solution's functions and classes: its answered notebook's code cells, run here
    (test cells and demonstrations left out)."""
    namespace: dict = {"__name__": "solution"}
    for cell in answered_notebook(SOLUTION, None).cells:
        meta = cell.metadata.get("nbgrader", {})
        if cell.cell_type != "code" or meta.get("grade") or "demo" in cell.metadata.get(
                "tags", []):
            continue
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(cell.source, f"<{meta.get('grade_id')}>", "exec"), namespace)
    return namespace


def median_seconds(functions: list, repeat: int, warmup: int = 3) -> list[float]:
    """Median time of each function, calls of the different functions alternating."""
    for function in functions:
        for _ in range(warmup):
            function()
    times: list[list[float]] = [[] for _ in functions]
    for _ in range(repeat):
        for function, seen in zip(functions, times, strict=True):
            started = time.perf_counter()
            function()
            seen.append(time.perf_counter() - started)
    return [statistics.median(seen) for seen in times]


def twin_of(module: nn.Module) -> nn.MultiheadAttention:
    d_model = module.q_proj.in_features
    twin = nn.MultiheadAttention(d_model, module.num_heads, batch_first=True).eval()
    twin.in_proj_weight.copy_(torch.cat([module.q_proj.weight, module.k_proj.weight,
                                         module.v_proj.weight]))
    twin.in_proj_bias.copy_(torch.cat([module.q_proj.bias, module.k_proj.bias,
                                       module.v_proj.bias]))
    twin.out_proj.weight.copy_(module.out_proj.weight)
    twin.out_proj.bias.copy_(module.out_proj.bias)
    return twin


def measure(sdpa, MultiHeadAttention, B, T, d_model, H, repeat) -> list[float]:
    """Medians of: the reference attention, torch's; the reference module, torch's; both
    with a causal mask."""
    torch.manual_seed(0)
    x = torch.randn(B, T, d_model)
    q, k, v = (torch.randn(B, H, T, d_model // H) for _ in range(3))
    mask = torch.ones(T, T, dtype=torch.bool).tril()                          # causal
    mha = MultiHeadAttention(d_model, H).eval()
    twin = twin_of(mha)
    torch_sdpa = nn.functional.scaled_dot_product_attention
    return median_seconds([
        lambda: sdpa(q, k, v),
        lambda: torch_sdpa(q, k, v),
        lambda: mha(x, x, x),
        lambda: twin(x, x, x, need_weights=True, average_attn_weights=False),
        lambda: mha(x, x, x, mask),
        lambda: twin(x, x, x, attn_mask=~mask, need_weights=True, average_attn_weights=False)],
        repeat)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args()
    torch.set_num_threads(args.threads)
    solution = solution_namespace()
    sdpa, MultiHeadAttention = solution["scaled_dot_product_attention"], \
        solution["MultiHeadAttention"]
    print(f"median of {args.repeat} calls, {args.threads} thread(s), float32, inference; "
          f"ratio = reference / PyTorch (target <= {TARGET})")
    print(f"{'B':>2} {'T':>4} {'d_model':>7} {'H':>2} | {'sdpa ms':>8} {'torch':>8} "
          f"{'ratio':>5} | {'MHA ms':>8} {'torch':>8} {'ratio':>5} | masked MHA ratio")
    worst = 0.0
    with torch.inference_mode():
        for B, T, d_model, H in SIZES:
            s_ref, s_torch, m_ref, m_torch, mm_ref, mm_torch = measure(
                sdpa, MultiHeadAttention, B, T, d_model, H, args.repeat)
            ratios = (s_ref / s_torch, m_ref / m_torch, mm_ref / mm_torch)
            worst = max(worst, ratios[1], ratios[2])
            print(f"{B:>2} {T:>4} {d_model:>7} {H:>2} | {1e3 * s_ref:8.3f} "
                  f"{1e3 * s_torch:8.3f} {ratios[0]:5.2f} | {1e3 * m_ref:8.3f} "
                  f"{1e3 * m_torch:8.3f} {ratios[1]:5.2f} | {ratios[2]:5.2f}")
    print(f"worst MultiHeadAttention ratio (same outputs as nn.MultiheadAttention): "
          f"{worst:.2f} ({'within' if worst <= TARGET else 'ABOVE'} the target {TARGET})")


if __name__ == "__main__":
    main()
