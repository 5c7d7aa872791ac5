"""Multi-head attention on the CPU: attnlab against torch, as ratios measured in one run.

    python benchmarks/bench_attention.py [--rounds 6] [--threads 1]

Two sizes: B=8, T=512, D=512, 8 heads, causal (training size), and 1 x 12 tokens, D=64, 8 heads
(the explorer's size, where per-call overhead dominates). For each, forward (no_grad) and
forward+backward, each variant is compared with the torch program that does the same work:

    attnlab fast path (need_weights=False)  vs  the same projections + F.scaled_dot_product_attention
    the same, causality said by is_causal=True (no mask tensor) on both sides
    attnlab weights path (need_weights=True) vs  the same projections + matmul, masked_fill, softmax, matmul
    attnlab, both paths                      vs  nn.MultiheadAttention (need_weights False / True per head)

In the forward (no_grad, eval) runs nn.MultiheadAttention takes its fused C++ inference kernel
(torch._native_multi_head_attention); with gradients it runs its Python path, like attnlab.

Rounds are interleaved (A B C ..., then B C ... A, ...: the order rotates) so that a slow phase
of the machine hits every variant alike; a round times `inner` calls of a variant, and the figure
is the median over rounds.
"""
from __future__ import annotations

import argparse
import math
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from attnlab import MultiHeadAttention, causal_mask

GOALS = {"fast path / torch floor": 1.05, "is_causal: fast path / torch floor": 1.05, "weights path / torch reference": 1.15,
         "fast path / nn.MultiheadAttention": 1.5, "weights path / nn.MultiheadAttention": 1.5}


def build(D: int, H: int):
    torch.manual_seed(0)
    ours = MultiHeadAttention(D, H)
    ref = nn.MultiheadAttention(D, H, batch_first=True)
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.load_state_dict(ours.out_proj.state_dict())
    return ours, ref


def variants(ours, ref, x, mask):
    """name -> function of no argument returning the (B, T, D) output."""
    blocked = ~mask[0, 0]                                   # nn.MultiheadAttention: True = blocked
    scale = 1.0 / math.sqrt(ours.d_k)

    def heads(x):
        return [ours.split_heads(lin(x)) for lin in (ours.q_proj, ours.k_proj, ours.v_proj)]

    def torch_floor():                                      # the least the fast path can cost
        q, k, v = heads(x)
        return ours.out_proj(ours.merge_heads(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)))

    def torch_floor_causal():                               # the same with torch's own causal flag
        q, k, v = heads(x)
        return ours.out_proj(ours.merge_heads(F.scaled_dot_product_attention(q, k, v, is_causal=True)))

    def torch_weights():                                    # the same weights, written plainly
        q, k, v = heads(x)
        scores = torch.matmul(q, k.transpose(-2, -1)) * scale
        weights = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        return ours.out_proj(ours.merge_heads(torch.matmul(weights, v)))

    return {
        "torch floor (projections + F.sdpa)": torch_floor,
        "attnlab fast path": lambda: ours(x, mask=mask, need_weights=False)[0],
        "torch floor, is_causal": torch_floor_causal,
        "attnlab fast path, is_causal": lambda: ours(x, is_causal=True, need_weights=False)[0],
        "torch reference with weights": torch_weights,
        "attnlab weights path": lambda: ours(x, mask=mask, need_weights=True)[0],
        "nn.MultiheadAttention, no weights": lambda: ref(x, x, x, attn_mask=blocked, need_weights=False)[0],
        "nn.MultiheadAttention, per-head weights":
            lambda: ref(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False)[0],
    }


def measure(fns: dict, backward: bool, rounds: int, inner: int) -> dict:
    def call(fn):
        if backward:
            fn().sum().backward()
        else:
            with torch.no_grad():
                fn()

    for fn in fns.values():                                 # warm-up
        call(fn)
    times = {name: [] for name in fns}
    names = list(fns)
    for r in range(rounds):
        for name in names[r % len(names):] + names[:r % len(names)]:   # rotate: no variant always first
            fn = fns[name]
            start = time.perf_counter()
            for _ in range(inner):
                call(fn)
            times[name].append((time.perf_counter() - start) / inner)
    return {name: statistics.median(ts) * 1e3 for name, ts in times.items()}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=6)
    p.add_argument("--threads", type=int, default=1)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    print(f"CPU, {torch.get_num_threads()} thread(s), torch {torch.__version__}; "
          f"median of {args.rounds} interleaved rounds; ms per call")
    failed = []
    for B, T, D, H, inner in ((8, 512, 512, 8, 1), (1, 12, 64, 8, 200)):
        ours, ref = build(D, H)
        x = torch.randn(B, T, D)
        mask = causal_mask(T)                               # (1, 1, T, T), True = may attend
        fns = variants(ours, ref, x, mask)
        with torch.no_grad():                               # all variants compute the same output
            outs = [fn() for fn in fns.values()]
            for out in outs[1:]:
                torch.testing.assert_close(out, outs[0], atol=1e-4, rtol=1e-4)
        for backward in (False, True):
            med = measure(fns, backward, args.rounds, inner)
            what = "forward+backward" if backward else "forward (no_grad, eval)"
            print(f"\nB={B} T={T} D={D} heads={H}, causal, {what}")
            for name, ms in med.items():
                print(f"  {name:42s} {ms:9.3f}")
            ratios = {"fast path / torch floor": med["attnlab fast path"] / med["torch floor (projections + F.sdpa)"],
                      "is_causal: fast path / torch floor":
                          med["attnlab fast path, is_causal"] / med["torch floor, is_causal"],
                      "weights path / torch reference":
                          med["attnlab weights path"] / med["torch reference with weights"],
                      "fast path / nn.MultiheadAttention":
                          med["attnlab fast path"] / med["nn.MultiheadAttention, no weights"],
                      "weights path / nn.MultiheadAttention":
                          med["attnlab weights path"] / med["nn.MultiheadAttention, per-head weights"]}
            for name, r in ratios.items():
                goal = GOALS[name] if (T > 100) == ("nn.Multi" not in name) else None
                verdict = "" if goal is None else f"  (goal <= {goal:.2f}x: {'PASS' if r <= goal else 'FAIL'})"
                print(f"  {name:42s} {r:8.2f}x{verdict}")
                if goal is not None and r > goal:
                    failed.append(f"{B}x{T} {what}: {name}")
    print("\nall goals met" if not failed else "\ngoals missed: " + "; ".join(failed))


if __name__ == "__main__":
    main()
