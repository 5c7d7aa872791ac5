"""What `import attnlab` costs on top of `import torch` (goal: at most 0.15 s more).

    python benchmarks/bench_import.py [ROUNDS]

Each round starts fresh interpreters (alternating, so drift hits both alike) and times the
import statement inside them: `import torch` alone, and `import attnlab` (which imports torch).
Prints the medians and their difference, the time of `import attnlab` in a process that has
already imported torch (attnlab's own share, less noisy on a loaded machine), and which front-end modules `import attnlab` loaded.
"""
from __future__ import annotations

import json
import statistics
import subprocess
import sys

PROBE = """
import time, sys, json
{before}
t0 = time.perf_counter()
import {module}
t = time.perf_counter() - t0
print(json.dumps([t, [m for m in ("ipywidgets", "IPython", "matplotlib", "matplotlib.pyplot") if m in sys.modules]]))
"""


def once(module: str, before: str = "") -> tuple[float, list[str]]:
    out = subprocess.run([sys.executable, "-c", PROBE.format(module=module, before=before)], check=True,
                         capture_output=True, text=True).stdout
    seconds, loaded = json.loads(out.strip().splitlines()[-1])
    return seconds, loaded


def main(rounds: int = 15) -> int:
    once("torch"), once("attnlab")          # warm the file cache
    torch_s, attnlab_s, own_s, loaded = [], [], [], []
    for _ in range(rounds):
        torch_s.append(once("torch")[0])
        s, loaded = once("attnlab")
        attnlab_s.append(s)
        own_s.append(once("attnlab", before="import torch")[0])
    t, a = statistics.median(torch_s), statistics.median(attnlab_s)
    print(f"import torch   : median {t * 1000:7.1f} ms  ({rounds} fresh processes)")
    print(f"import attnlab : median {a * 1000:7.1f} ms  (includes torch)")
    print(f"difference     : {1000 * (a - t):+7.1f} ms   (goal: at most +150 ms)")
    print(f"import attnlab after torch: median {1000 * statistics.median(own_s):7.1f} ms  (attnlab's own modules;"
          " steadier than the difference on a busy machine)")
    print(f"front-end modules loaded by `import attnlab`: {', '.join(loaded) or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main(*(int(a) for a in sys.argv[1:])))
