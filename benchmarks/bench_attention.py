"""Multi-head attention, forward on the CPU: attnlab against torch, as ratios from one run.

    python benchmarks/bench_attention.py [--batch 8 --seq 512 --d-model 512 --heads 8 --repeats 20]

Every variant is timed in interleaved rounds (A B C D A B C D ...) so that a slow phase of the
machine hits all of them alike; the figure reported is the median per call.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from attnlab import MultiHeadAttention, causal_mask


def build(d_model: int, heads: int):
    torch.manual_seed(0)
    ours = MultiHeadAttention(d_model, heads).eval()
    ref = nn.MultiheadAttention(d_model, heads, batch_first=True).eval()
    with torch.no_grad():
        ref.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        ref.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        ref.out_proj.load_state_dict(ours.out_proj.state_dict())
    return ours, ref


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--seq", type=int, default=512)
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--repeats", type=int, default=20)
    args = p.parse_args()

    B, T, D, H = args.batch, args.seq, args.d_model, args.heads
    ours, ref = build(D, H)
    x = torch.randn(B, T, D)
    mask = causal_mask(T)                                   # (1, 1, T, T), True = may attend
    blocked = ~mask[0, 0]                                   # nn.MultiheadAttention: True = blocked

    def sdpa_only():  # torch's kernel alone on projected inputs: the floor for the fast path
        q, k, v = (ours.split_heads(lin(x)) for lin in (ours.q_proj, ours.k_proj, ours.v_proj))
        return ours.out_proj(ours.merge_heads(F.scaled_dot_product_attention(q, k, v, attn_mask=mask)))

    mha_fast, mha_weights = "torch nn.MultiheadAttention, no weights", "torch nn.MultiheadAttention, per-head weights"
    # name -> (function, the torch variant it is compared with)
    variants = {
        mha_fast: (lambda: ref(x, x, x, attn_mask=blocked, need_weights=False), mha_fast),
        "torch projections + F.sdpa": (sdpa_only, mha_fast),
        "attnlab fast path (need_weights=False)": (lambda: ours(x, mask=mask, need_weights=False), mha_fast),
        mha_weights: (lambda: ref(x, x, x, attn_mask=blocked, need_weights=True, average_attn_weights=False),
                      mha_weights),
        "attnlab explicit (weights returned)": (lambda: ours(x, mask=mask, need_weights=True), mha_weights),
    }
    times = {name: [] for name in variants}
    with torch.inference_mode():
        torch.testing.assert_close(ours(x, mask=mask, need_weights=False)[0],
                                   ref(x, x, x, attn_mask=blocked)[0], atol=1e-4, rtol=1e-4)
        for fn, _ in variants.values():                     # warm-up
            fn()
        for _ in range(args.repeats):
            for name, (fn, _) in variants.items():
                start = time.perf_counter()
                fn()
                times[name].append(time.perf_counter() - start)

    med = {name: statistics.median(ts) * 1e3 for name, ts in times.items()}
    print(f"forward, CPU ({torch.get_num_threads()} threads), torch {torch.__version__}, "
          f"B={B} T={T} D={D} heads={H}, causal, median of {args.repeats}")
    print(f"{'variant':48s} {'ms':>8s} {'vs torch MHA':>13s}")
    for name, ms in med.items():
        print(f"{name:48s} {ms:8.1f} {ms / med[variants[name][1]]:12.2f}x")
    ratio = med["attnlab fast path (need_weights=False)"] / med[mha_fast]
    print(f"\nfast path / torch MHA = {ratio:.2f}x (goal <= 1.10x): {'PASS' if ratio <= 1.10 else 'FAIL'}")


if __name__ == "__main__":
    main()
