"""The explorer's Python side: how long a control change takes in the kernel (compute + SVG).

    python benchmarks/bench_explorer.py [--changes 50]

Default size: the English example (10 tokens) + 2 pad tokens = 12 tokens, 8 heads side by side.
Prints wall-clock ms (median, p95) and the size of the HTML sent to the browser; nothing is
asserted. The browser's share (transfer, DOM, paint) is measured by bench_explorer_browser.py.
"""
from __future__ import annotations

import argparse
import itertools
import statistics
import time

import attnlab  # noqa: F401
from attnlab.explorer import ALL_HEADS, HEAD_COUNTS, MASK_TYPES, ExplorerState, compute, draw


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def series(states) -> tuple[list[float], int]:
    ms, size = [], 0
    for state in states:
        start = time.perf_counter()
        html, _ = draw(state, compute(state), "bench")
        ms.append(1000 * (time.perf_counter() - start))
        size = max(size, len(html.encode()))
    return ms, size


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=50)
    n = parser.parse_args().changes
    base = ExplorerState()
    cases = {
        "mask (8 heads, 12 tokens)": [base.replace(mask=m) for m in itertools.islice(itertools.cycle(MASK_TYPES), n)],
        "heads 1/2/4/8": [base.replace(num_heads=h) for h in itertools.islice(itertools.cycle(HEAD_COUNTS), n)],
        "which head": [base.replace(head=h) for h in itertools.islice(itertools.cycle([ALL_HEADS, *range(8)]), n)],
        "large font": [base.replace(large=k % 2 == 0) for k in range(n)],
        "32 tokens x 8 heads": [base.replace(sentence=" ".join(f"w{k}" for k in range(30)), mask=m)
                                for m in itertools.islice(itertools.cycle(MASK_TYPES), n)],
        "trained model, layer": [ExplorerState(model="trained", layer=1 + k % 2) for k in range(n)],
    }
    print(f"{'change':28s} {'n':>4s} {'median ms':>10s} {'p95 ms':>8s} {'max HTML kB':>12s}")
    for name, states in cases.items():
        series(states[:3])                                   # warm caches
        ms, size = series(states)
        print(f"{name:28s} {len(ms):4d} {statistics.median(ms):10.1f} {percentile(ms, 0.95):8.1f} {size / 1000:12.0f}")


if __name__ == "__main__":
    main()
