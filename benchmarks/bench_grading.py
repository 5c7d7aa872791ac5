"""Grading a class of 30 submissions, each in its sandbox against without (docs/grading.md, "Measurement").

    python benchmarks/bench_grading.py [--lesson 01_self_attention_vi] [--students 30] [--repeat 2] [-j 2]

Builds the class from the committed release notebook: a third hand in the reference solutions
(solutions/l01.py for lesson 01, solutions/catalogue.py's references for the others), a third nothing,
a third a syntax error in the first answer cell. Then grades it with ``tools.assignments.grade`` in
both modes, alternately (sandbox, unsafe, sandbox, unsafe, ...: the machine's load drifts), and prints
each run's wall and CPU time (the grader and everything it started), the medians, the ratio
sandbox / unsafe, and the load average before and after. Needs what the sandbox needs (root, bwrap).
"""
from __future__ import annotations

import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT / "tests"), str(ROOT), str(ROOT / "shared")]

from assignment_submissions import _in_lesson, evaluate_paths, lesson01_references, load_catalogue, put, with_answers  # noqa: E402


def references(aid: str) -> dict:
    """grade_id -> reference answer cell for the lesson of ``aid`` ({} if none is known)."""
    stem = aid.rpartition("_")[0]
    if stem == "01_self_attention":
        return lesson01_references()
    import nbformat
    paths = evaluate_paths(nbformat.read(ROOT / "assignments" / "source" / aid / f"{stem}.ipynb", as_version=4))
    return {paths[e["evaluate"]]: _in_lesson(e, e["reference"]) for e in load_catalogue() or []
            if e["lesson"] == stem and e["evaluate"] in paths}


def build(subs: Path, aid: str, students: int) -> None:
    stem = aid.rpartition("_")[0]
    release = ROOT / "assignments" / "release" / aid / f"{stem}.ipynb"
    refs = references(aid)
    first = next(iter(refs), None)
    for n in range(students):
        broken = {**refs, first: "def broken(x):\n    return (x\n"} if first else {}
        put(subs, f"student{n:02d}", aid, with_answers(release, (refs, {}, broken)[n % 3]))


def grade(subs: Path, out: Path, jobs: int, unsafe: bool) -> tuple[float, float]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]), "OMP_NUM_THREADS": "1"}
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.monotonic()
    r = subprocess.run([sys.executable, "-m", "tools.assignments.grade", str(subs), "--out", str(out), "-j", str(jobs),
                        "--force", *(["--unsafe"] if unsafe else [])], cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.monotonic() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if r.returncode:
        raise SystemExit(r.stderr[-3000:])
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lesson", default="01_self_attention_vi", help="an assignment id")
    ap.add_argument("--students", type=int, default=30)
    ap.add_argument("--repeat", type=int, default=2, help="runs of each mode")
    ap.add_argument("-j", "--jobs", type=int, default=2)
    args = ap.parse_args()
    runs = {"sandbox": [], "unsafe": []}
    load = [os.getloadavg()[0]]
    with tempfile.TemporaryDirectory() as tmp:
        subs = Path(tmp) / "submitted"
        build(subs, args.lesson, args.students)
        for i in range(args.repeat):
            for mode in ("sandbox", "unsafe"):
                wall, cpu = grade(subs, Path(tmp) / f"grades-{mode}-{i}", args.jobs, mode == "unsafe")
                runs[mode].append((wall, cpu))
                load.append(os.getloadavg()[0])
                print(f"{mode:8s} run {i + 1}: wall {wall:6.1f} s, CPU {cpu:6.1f} s, load {load[-1]:.1f}", flush=True)
    med = {m: (statistics.median(w for w, _ in r), statistics.median(c for _, c in r)) for m, r in runs.items()}
    print(f"{args.students} submissions of {args.lesson}, -j {args.jobs}, {args.repeat} runs each: median wall "
          f"sandbox {med['sandbox'][0]:.0f} s / unsafe {med['unsafe'][0]:.0f} s = {med['sandbox'][0] / med['unsafe'][0]:.2f}; "
          f"median CPU {med['sandbox'][1]:.0f} s / {med['unsafe'][1]:.0f} s = {med['sandbox'][1] / med['unsafe'][1]:.2f}; "
          f"load average (1 min) {min(load):.1f}-{max(load):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
