"""Sampling from lesson 10's GPT with and without the KV cache (``sample.generate(use_cache=...)``).

    python benchmarks/bench_poet_sampling.py [--lang vi] [--rounds 7] [--threads 1]

The shipped checkpoint (context 64) continues an 8-character prompt. Lengths: 56 (the text just
fills the context, so every step after the prompt uses the cache) and 160 (the lesson's longest
sample: past the context the window slides, every position changes, and each step recomputes
the window with or without the cache), for 1 and 12 samples (lesson 10 draws 12 at once). Each
round times both variants for every case, alternately, so a load spike hits both; printed per
case: the median time of each and the median of the per-round ratios (no cache / cache), in one
run, in wall-clock time and in CPU time of the sampling thread (``time.thread_time``; one thread,
so it is all the work, and on a shared machine it leaves out the waiting for a core). Both
variants draw the same text (checked once per case).
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch

from attnlab import poet
from attnlab.poet import sample

PROMPT_CHARS = 8
CASES = [(56, 1), (56, 12), (160, 1), (160, 12)]          # (length, num_samples)


def timed(model, vocab, prompt, length, n, use_cache, threads) -> tuple[float, float, list[str]]:
    start, start_cpu = time.perf_counter(), time.thread_time()
    texts = sample.generate(model, vocab, prompt, length, seed=0, num_samples=n, threads=threads,
                            use_cache=use_cache)
    return time.perf_counter() - start, time.thread_time() - start_cpu, texts


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=poet.LANGS, default="vi")
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    corpus, model = poet.load_corpus(args.lang), poet.load_pretrained(args.lang)
    prompt = corpus.vocab.decode(corpus.val_ids[:PROMPT_CHARS])
    times = {(case, cached): [] for case in CASES for cached in (True, False)}
    ratios = {case: [] for case in CASES}
    cpu_ratios = {case: [] for case in CASES}
    for case in CASES:                                                 # warm-up, and the same text both ways
        a, b = (timed(model, corpus.vocab, prompt, *case, cached, args.threads)[2] for cached in (True, False))
        if a != b:
            raise SystemExit(f"the cache changed the text for length {case[0]}, {case[1]} samples")
    for _ in range(args.rounds):
        for case in CASES:
            spent, cpu = {}, {}
            for cached in (True, False):
                spent[cached], cpu[cached], _ = timed(model, corpus.vocab, prompt, *case, cached, args.threads)
                times[case, cached].append(spent[cached])
            ratios[case].append(spent[False] / spent[True])
            cpu_ratios[case].append(cpu[False] / cpu[True])
    print(f"lesson 10 GPT sampling ({args.lang} checkpoint, context {model.config.context}, prompt "
          f"{PROMPT_CHARS} characters; {args.threads} thread(s); torch {torch.__version__}; "
          f"medians of {args.rounds} rounds, the two variants alternating)")
    print(f"{'length':>6} {'samples':>7} {'cache (ms)':>11} {'no cache (ms)':>14} {'no cache / cache':>17} "
          f"{'in CPU time':>12}")
    for case in CASES:
        cached, full = (1000 * statistics.median(times[case, c]) for c in (True, False))
        print(f"{case[0]:>6} {case[1]:>7} {cached:>11.1f} {full:>14.1f} {statistics.median(ratios[case]):>16.2f}x "
              f"{statistics.median(cpu_ratios[case]):>11.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
