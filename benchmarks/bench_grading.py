"""Grading a class of 30 submissions of one lesson on one core (docs/grading.md, "Measurement").

    python benchmarks/bench_grading.py [--lesson 01_self_attention_vi] [--students 30]

Builds the class from the committed release notebook: a third hand in the reference solutions
(solutions/l01.py, lesson 01 only; other lessons: the untouched notebook), a third nothing, a
third a syntax error in the first exercise. Then runs ``tools.assignments.grade -j 1`` under
``taskset -c 0`` (one core) and prints the wall time and the grader's CPU time (it and its kernels).
"""
from __future__ import annotations

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "shared")]

from assignment_submissions import lesson01_references, put, with_answers  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lesson", default="01_self_attention_vi")
    ap.add_argument("--students", type=int, default=30)
    args = ap.parse_args()
    stem = args.lesson.rpartition("_")[0]
    release = ROOT / "assignments" / "release" / args.lesson / f"{stem}.ipynb"
    refs = lesson01_references() if stem == "01_self_attention" else {}
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submitted"
        for n in range(args.students):
            answers = (refs, {}, {**refs, "l01-softmax": "def my_softmax(x):\n    return (x\n"})[n % 3]
            put(subs, f"student{n:02d}", args.lesson, with_answers(release, answers))
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]),
               "OMP_NUM_THREADS": "1"}
        pin = ["taskset", "-c", "0"] if shutil.which("taskset") else []
        start = time.monotonic()
        r = subprocess.run([*pin, sys.executable, "-m", "tools.assignments.grade", str(subs), "--out",
                            str(Path(tmp) / "grades"), "-j", "1"], cwd=ROOT, env=env, capture_output=True, text=True)
        wall = time.monotonic() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        if r.returncode:
            print(r.stderr[-2000:], file=sys.stderr)
            return 1
        print(r.stdout.strip())
    cpu = usage.ru_utime + usage.ru_stime
    print(f"{args.students} submissions of {args.lesson}, one core{' (taskset -c 0)' if pin else ''}: "
          f"wall {wall:.0f} s ({wall / args.students:.1f} s each), CPU {cpu:.0f} s ({cpu / args.students:.1f} s each); "
          f"load average before/after: {os.getloadavg()[0]:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
