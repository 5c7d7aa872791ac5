"""Greedy decoding with and without the KV cache: speed-up vs output length (lesson 08).

    python benchmarks/bench_kv_cache.py [--rounds 7] [--batch 1]

The translator's decoder (the lesson's model, untrained weights: speed does not depend on them)
generates exactly n tokens (``max_len=n``, no early stop). Each round times both variants for
every n, interleaved, so a load spike hits both; the printed figure per n is the median over rounds
of the ratio (no cache / cache), with the median times. CPU, one thread (the lesson's setting);
CUDA too when present. The positional table is extended so n can exceed the lesson's 10 tokens.
"""
from __future__ import annotations

import argparse
import statistics
import time

import torch

from attnlab import translator as tr
from attnlab.positional import PositionalEncoding


def model_for(max_len: int, device) -> tr.Translator:
    m = tr.make_model("vi")
    m.pos = PositionalEncoding(m.config.d_model, max_len=max_len + 1)
    return m.to(device).eval()


def time_once(m, src, n, use_cache, device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    gen = _generate_exactly(m, src, n, use_cache)
    if device.type == "cuda":
        torch.cuda.synchronize()
    assert gen == n
    return time.perf_counter() - t0


@torch.no_grad()
def _generate_exactly(m, src, n, use_cache) -> int:
    """n greedy steps, never stopping at EOS (so both variants do the same work)."""
    memory, _ = m.encode(src)
    fed = torch.full((src.shape[0], 1), tr.BOS, device=src.device)
    cache = tr.KVCache.start(m, memory, src) if use_cache else None
    for _ in range(n):
        if use_cache:
            logits = tr.cached_step(m, fed[:, -1], cache)
        else:
            logits = m.decode(fed, memory, src)[0][:, -1]
        fed = torch.cat([fed, logits[:, tr.EOS:].argmax(-1, keepdim=True) + tr.EOS], dim=1)
    return fed.shape[1] - 1


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--rounds", type=int, default=7)
    p.add_argument("--batch", type=int, default=1)
    p.add_argument("--lengths", type=int, nargs="+", default=[8, 16, 32, 64, 128, 256])
    args = p.parse_args()
    devices = [torch.device("cpu")] + ([torch.device("cuda")] if torch.cuda.is_available() else [])
    torch.set_num_threads(1)
    print(f"torch {torch.__version__}; batch {args.batch}; {args.rounds} interleaved rounds; median ratio")
    for device in devices:
        m = model_for(max(args.lengths), device)
        src = tr.encode_source([12345] * args.batch).to(device)
        for n in args.lengths[:2]:                                   # warm-up
            time_once(m, src, n, True, device), time_once(m, src, n, False, device)
        ratios = {n: [] for n in args.lengths}
        times = {n: ([], []) for n in args.lengths}
        for _ in range(args.rounds):
            for n in args.lengths:
                slow = time_once(m, src, n, False, device)
                fast = time_once(m, src, n, True, device)
                ratios[n].append(slow / fast)
                times[n][0].append(slow)
                times[n][1].append(fast)
        print(f"\n{device.type}:   n   no cache (ms)   cache (ms)   speed-up")
        for n in args.lengths:
            print(f"      {n:>5}   {1e3 * statistics.median(times[n][0]):>12.1f}   "
                  f"{1e3 * statistics.median(times[n][1]):>10.1f}   {statistics.median(ratios[n]):>7.2f}x")


if __name__ == "__main__":
    main()
