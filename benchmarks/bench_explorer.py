"""How long the explorer takes to answer a control change: compute + render + PNG.

    python benchmarks/bench_explorer.py [--changes 50]

Default size: the English example (10 tokens) + 2 pad tokens = 12 tokens, 8 heads side by
side. Goal: p95 <= 100 ms per change on a 2-core machine. Prints wall-clock and CPU times;
nothing here is asserted (the tests never time anything). The first series are what the
explorer does (one canvas redrawn in place); the last is ``render()``, a new figure each time.
The trained-model rows show the tiny reversal model (4 heads, 12-16 tokens): layer, head and
digit changes (attention cached per digit string), and the widget's model switch back and forth.
"""
from __future__ import annotations

import argparse
import itertools
import os
import random
import statistics
import sys
import time

import matplotlib

matplotlib.use("Agg")

import attnlab  # noqa: E402
from attnlab.explorer import (ALL_HEADS, HEAD_COUNTS, MASK_TYPES, ExplorerState, compute, draw, new_canvas,  # noqa: E402
                              render, to_png)


def percentile(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, round(q * (len(values) - 1)))]


def timed(fn) -> tuple[float, float]:
    """(wall ms, CPU ms of this process) of one call."""
    wall, cpu = time.perf_counter(), time.process_time()
    fn()
    return 1000 * (time.perf_counter() - wall), 1000 * (time.process_time() - cpu)


def report(name: str, samples: list[tuple[float, float]]) -> None:
    wall, cpu = [w for w, _ in samples], [c for _, c in samples]
    print(f"{name:<46s} n={len(samples):3d}  wall median {statistics.median(wall):6.1f} ms  "
          f"p95 {percentile(wall, 0.95):6.1f} ms   cpu median {statistics.median(cpu):6.1f} ms  "
          f"p95 {percentile(cpu, 0.95):6.1f} ms")


CANVAS = new_canvas()


def render_png(state: ExplorerState) -> bytes:
    """What the explorer does per change: compute, redraw its canvas in place, encode the PNG."""
    draw(state, compute(state), CANVAS)
    return CANVAS.png()


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--changes", type=int, default=50, help="control changes per series (default 50)")
    n = parser.parse_args(argv).changes
    base = ExplorerState()                                   # 12 tokens, 8 heads, all heads shown
    print(f"python {sys.version.split()[0]}, matplotlib {matplotlib.__version__}, "
          f"{os.cpu_count()} CPUs, {len(compute(base).tokens)} tokens")

    report("first figure (cold: model, fonts, label cache)", [timed(lambda: render_png(base))])
    for _ in range(3):                                       # warm-up, as after the widget's first draw
        render_png(base)

    masks = itertools.cycle(MASK_TYPES[1:] + MASK_TYPES[:1])
    report("mask type changes, 8 heads", [timed(lambda: render_png(base.replace(mask=next(masks))))
                                                 for _ in range(n)])
    pairs = itertools.cycle([(m, h) for h in HEAD_COUNTS for m in MASK_TYPES])
    report("mask type + head count cycle",
           [timed(lambda: render_png(base.replace(**dict(zip(("mask", "num_heads"), next(pairs))))))
            for _ in range(n)])

    explorer = attnlab.explore(lang="en")
    controls = itertools.cycle([("mask", m) for m in MASK_TYPES[1:] + MASK_TYPES[:1]] +
                               [("num_heads", h) for h in (4, 2, 1, 8)])

    def change():
        name, value = next(controls)
        explorer.controls[name].value = value
    report("widget control changes (mask, head count)", [timed(change) for _ in range(n)])
    words = "one two three four five six seven eight nine ten".split()
    sentences = (" ".join(f"{w}{k}" for w in words) for k in itertools.count())   # 10 new labels each time
    report("new sentence each time (labels not cached)",
           [timed(lambda: render_png(base.replace(sentence=next(sentences), pad=0))) for _ in range(n)])
    trained = base.replace(model="trained")
    render_png(trained)                                      # loads the checkpoint once
    cycle = itertools.cycle([dict(layer=l, head=h, digits=d) for d in ("3 1 4 1 5 9", "2 7 1 8 2 8 1 8")
                             for l in (1, 2) for h in (ALL_HEADS, 0)])
    report("trained model: layer / head / digits changes",
           [timed(lambda: render_png(trained.replace(**next(cycle)))) for _ in range(n)])
    rng = random.Random(0)
    new_digits = (" ".join(str(rng.randrange(10)) for _ in range(8)) for _ in itertools.count())
    report("trained model: new digit string (not cached)", [timed(lambda: render_png(trained.replace(
        digits=next(new_digits)))) for _ in range(n)])
    models = itertools.cycle(["trained", "random"])

    def switch():
        explorer.controls["model"].value = next(models)
    report("widget model switch (random <-> trained)", [timed(switch) for _ in range(n)])
    report("render(): a new figure per change (reference)",
           [timed(lambda: to_png(render(base.replace(mask=next(masks))))) for _ in range(n)])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
