"""Training throughput of lesson 10's GPT against the same model written plainly (nanoGPT style).

    python benchmarks/bench_poet.py [--lang vi] [--rounds 5] [--steps 10] [--threads 1]

Both models have the same sizes as the lesson's (``attnlab.poet.PoetConfig``: 4 pre-LN blocks,
d_model 64, 4 heads, d_ff 256, ReLU, learned positions, tied embeddings, context 64) and train
on the same batches (32 windows of the corpus) with AdamW. The plain model computes q, k, v with
one fused Linear and calls ``F.scaled_dot_product_attention(..., is_causal=True)``; the package's
model goes through ``attnlab.TransformerBlock`` called with ``is_causal=True`` (the same kernel call). Steps alternate
(package, plain, package, plain, ...) so that a busy machine slows both alike; after one warm-up
step each, a round times ``--steps`` optimizer steps of each model. Prints tokens/s (median over rounds) and the
ratio package / plain with PASS or MISS against the goal 0.95, in one run. Each step is timed twice: wall clock
(the goal) and the CPU time of the timing thread (``time.thread_time``), which on a shared machine counts the
work done rather than the waiting for a core, so its ratio is the steadier figure when the load is high.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import time

import torch
import torch.nn as nn
import torch.nn.functional as F

from attnlab import poet

GOAL = 0.95


class PlainBlock(nn.Module):
    def __init__(self, d: int, h: int, d_ff: int):
        super().__init__()
        self.h = h
        self.ln_1, self.ln_2 = nn.LayerNorm(d), nn.LayerNorm(d)
        self.c_attn, self.c_proj = nn.Linear(d, 3 * d), nn.Linear(d, d)
        self.fc, self.proj = nn.Linear(d, d_ff), nn.Linear(d_ff, d)

    def forward(self, x):
        B, T, D = x.shape
        q, k, v = self.c_attn(self.ln_1(x)).split(D, dim=2)
        q, k, v = (t.view(B, T, self.h, D // self.h).transpose(1, 2) for t in (q, k, v))    # (B, H, T, d_k)
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.c_proj(y.transpose(1, 2).reshape(B, T, D))
        return x + self.proj(torch.relu(self.fc(self.ln_2(x))))


class PlainGPT(nn.Module):
    def __init__(self, c: poet.PoetConfig):
        super().__init__()
        self.wte, self.wpe = nn.Embedding(c.vocab_size, c.d_model), nn.Embedding(c.context, c.d_model)
        self.blocks = nn.ModuleList(PlainBlock(c.d_model, c.num_heads, c.d_ff) for _ in range(c.num_layers))
        self.ln_f = nn.LayerNorm(c.d_model)

    def forward(self, ids):
        x = self.wte(ids) + self.wpe(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        return self.ln_f(x) @ self.wte.weight.T


def step_fn(model, logits_of):
    opt = torch.optim.AdamW(model.parameters(), lr=3e-4)

    def step(x, y):
        logits = logits_of(model, x)
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    return step


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=poet.LANGS, default="vi")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--threads", type=int, default=1)
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    corpus = poet.load_corpus(args.lang)
    package = poet.new_model(corpus)
    config = package.config
    torch.manual_seed(0)
    plain = PlainGPT(config)
    n_pkg, n_plain = (sum(p.numel() for p in m.parameters()) for m in (package, plain))
    batches = corpus.batches(args.batch, config.context, seed=0)
    data = [next(batches) for _ in range(args.steps + 1)]
    steps = {"package": step_fn(package, lambda m, x: m(x)[0]), "plain": step_fn(plain, lambda m, x: m(x))}
    rates: dict[str, list[float]] = {name: [] for name in steps}
    cpu_rates: dict[str, list[float]] = {name: [] for name in steps}
    tokens = args.batch * config.context
    for step in steps.values():
        step(*data[0])                                               # warm-up
    for _ in range(args.rounds):
        spent, cpu = dict.fromkeys(steps, 0.0), dict.fromkeys(steps, 0.0)
        for x, y in data[1:]:                                        # one step of each, alternately
            for name, step in steps.items():
                start, start_cpu = time.perf_counter(), time.thread_time()
                step(x, y)
                cpu[name] += time.thread_time() - start_cpu
                spent[name] += time.perf_counter() - start
        for name in steps:
            rates[name].append(args.steps * tokens / spent[name])
            cpu_rates[name].append(args.steps * tokens / cpu[name])
    pkg, ref = statistics.median(rates["package"]), statistics.median(rates["plain"])
    ratio = pkg / ref
    cpu_ratio = statistics.median(cpu_rates["package"]) / statistics.median(cpu_rates["plain"])
    print(f"lesson 10 GPT ({args.lang}: vocab {config.vocab_size}, {config.num_layers} blocks, d_model {config.d_model}, "
          f"{config.num_heads} heads, context {config.context}; batch {args.batch}; {args.threads} thread(s); "
          f"torch {torch.__version__})")
    print(f"parameters: package {n_pkg:,}, plain {n_plain:,}")
    print(f"package (TransformerBlock, is_causal):   {pkg:10,.0f} training tokens/s (median of {args.rounds} rounds)")
    print(f"plain (nanoGPT style, SDPA is_causal):   {ref:10,.0f} training tokens/s")
    print(f"ratio package / plain: {ratio:.3f}  {'PASS' if ratio >= GOAL else 'MISS'} (goal >= {GOAL})")
    print(f"ratio package / plain in CPU time of the timing thread: {cpu_ratio:.3f}  "
          f"{'PASS' if cpu_ratio >= GOAL else 'MISS'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
