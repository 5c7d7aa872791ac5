"""Mutation testing of the exercise checkers (`make mutation`, docs/checkers.md).

mutmut (pyproject.toml, [tool.mutmut]) mutates the reference solutions in solutions/ and runs
tests/test_mutation_targets.py against each mutant: the exercise's own checker is the test, and a
mutant survives when the checker accepts it. This script runs mutmut, files every mutant under its
exercise (solutions/targets.py), and

* writes solutions/mutation_results.json: each mutant's status and, for the survivors, its diff;
* writes the score table of docs/checkers.md (between its `mutation-table` markers);
* exits 1 when a survivor is not listed, with its reason, in solutions/equivalent_mutants.json
  (or a listed one no longer survives): every survivor is killed by a better probe or explained.

    python tools/mutation.py            # run mutmut, then report (writes the results and the table)
    python tools/mutation.py --report   # report on the last run (mutants/), without running
    python tools/mutation.py --check    # run mutmut; exit 1 unless the stored results and table are what it gives (CI)
"""
from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "solutions" / "mutation_results.json"
EQUIVALENT = ROOT / "solutions" / "equivalent_mutants.json"
DOC = ROOT / "docs" / "checkers.md"
BEGIN, END = "<!-- mutation-table: begin (tools/mutation.py writes it) -->", "<!-- mutation-table: end -->"
KILLED = ("killed", "timeout", "segfault")   # mutmut's statuses of a mutant its test rejected (a timeout too)
NAME = re.compile(r"^solutions\.(?P<module>[a-z0-9_]+)\.x(?:_|ǁ(?P<cls>[A-Za-z0-9_]+)ǁ)(?P<func>[A-Za-z0-9_]+?)__mutmut_\d+$")


def mutmut(*args: str, check: bool = True) -> str:
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-m", "mutmut", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    if check and done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"mutmut {' '.join(args)} failed ({done.returncode})")
    return done.stdout


def exercise(name: str) -> str | None:
    """The registry key of the exercise a mutant belongs to."""
    sys.path.insert(0, str(ROOT))
    from solutions import targets
    m = NAME.match(name)
    if not m:
        return None
    function = f"{m['cls']}.{m['func']}" if m["cls"] else m["func"]
    return targets.exercise_of(m["module"], function)


def statuses() -> dict[str, str]:
    """Every mutant of the last run and its status (killed, survived, timeout, no tests, ...)."""
    out = {}
    for line in mutmut("results", "--all", "true").splitlines():
        name, _, status = line.strip().partition(": ")
        if name.startswith("solutions."):
            out[name] = status
    return out


# `mutmut show NAME` for each name in one process (mutmut's own command, through its click group),
# each answer after a line with a NUL and the name: one interpreter start, not one per survivor.
SHOW_EACH = """import sys
from mutmut.__main__ import cli
for name in sys.argv[1:]:
    print("\\0" + name, flush=True)
    cli.main(["show", name], standalone_mode=False)
"""


def diffs(names: list[str]) -> dict[str, str]:
    """The changed lines of each mutant (what `mutmut show` prints, without its header)."""
    if not names:
        return {}
    env = {**os.environ, "OMP_NUM_THREADS": "1", "PYTHONHASHSEED": "0"}
    done = subprocess.run([sys.executable, "-c", SHOW_EACH, *names], cwd=ROOT, env=env, capture_output=True,
                          text=True)
    if done.returncode != 0:
        sys.stderr.write(done.stdout[-4000:] + done.stderr[-4000:])
        raise SystemExit(f"mutmut show failed ({done.returncode})")
    shown: dict[str, list[str]] = {}
    lines: list[str] = []                       # (anything printed before the first name is dropped)
    for line in done.stdout.splitlines():
        if line.startswith("\0"):
            lines = shown.setdefault(line[1:], [])
        else:
            lines.append(line)
    assert sorted(shown) == sorted(names), f"mutmut show answered for {sorted(shown)}, not {sorted(names)}"
    return {name: "\n".join(line for line in lines if line[:1] in "+-" and not line.startswith(("+++", "---")))
            for name, lines in shown.items()}


def collect() -> dict[str, dict]:
    """The last run's mutants of the targets, by exercise: {key: {mutant: {"status", "diff"?}}}."""
    by_exercise: dict[str, dict] = {}
    found = {name: (key, st) for name, st in sorted(statuses().items()) if (key := exercise(name)) is not None}
    survivors = diffs([name for name, (_, st) in found.items() if st == "survived"])
    for name, (key, st) in found.items():
        entry = {"status": "killed" if st in KILLED else st}          # (a timeout kills too: stored as killed)
        if st == "survived":
            entry["diff"] = survivors[name]
        by_exercise.setdefault(key, {})[name] = entry
    return by_exercise


def problems(by_exercise: dict, equivalent: dict) -> list[str]:
    """Every survivor not explained, and every explanation that no longer fits a survivor."""
    out = []
    for key, mutants in by_exercise.items():
        listed = equivalent.get(key, {})
        for name, entry in mutants.items():
            if entry["status"] == "survived" and name not in listed:
                out.append(f"{name} ({key}) {entry['status']}, not explained:\n{entry.get('diff', '')}")
            elif entry["status"] not in KILLED + ("survived",):
                out.append(f"{name} ({key}): status {entry['status']!r} (its test did not run on it)")
        for name, why in listed.items():
            if name not in mutants or mutants[name]["status"] != "survived":
                out.append(f"{name} ({key}) is listed as equivalent but was killed (or is gone): delete it")
            elif not why.get("reason") or why.get("diff") != mutants[name].get("diff"):
                out.append(f"{name} ({key}): the listed diff or reason does not match this mutant")
    return out


def report(check: bool = False) -> int:
    by_exercise = collect()
    equivalent = json.loads(EQUIVALENT.read_text(encoding="utf-8"))
    found = problems(by_exercise, equivalent)
    if check:
        stored = json.loads(RESULTS.read_text(encoding="utf-8"))
        if stored != by_exercise:
            changed = sorted({n for k in set(stored) | set(by_exercise) for n in
                              set(stored.get(k, {})).symmetric_difference(by_exercise.get(k, {}))} |
                             {n for k in by_exercise for n, e in by_exercise[k].items()
                              if stored.get(k, {}).get(n) not in (None, e)})
            found.append(f"solutions/mutation_results.json is not what this run gives ({len(changed)} mutants "
                         f"differ, e.g. {changed[:5]}): run `make mutation` and commit")
        text = DOC.read_text(encoding="utf-8")
        if text[text.index(BEGIN) + len(BEGIN):text.index(END)].strip() != table(by_exercise, equivalent):
            found.append("the table in docs/checkers.md is not this run's: run `make mutation` and commit")
    else:
        RESULTS.write_text(json.dumps(by_exercise, ensure_ascii=False, indent=1, sort_keys=True) + "\n",
                           encoding="utf-8")
        write_table(by_exercise, equivalent)
    for p in found:
        print(p, file=sys.stderr)
    killed = sum(m["status"] in KILLED for ms in by_exercise.values() for m in ms.values())
    total = sum(len(ms) for ms in by_exercise.values())
    print(f"mutation: {total} mutants of {len(by_exercise)} exercises, {killed} killed, "
          f"{total - killed} not killed; {len(found)} problem(s)")
    return 1 if found else 0


def table(by_exercise: dict, equivalent: dict) -> str:
    sys.path.insert(0, str(ROOT))
    from solutions import targets
    rows = ["| exercise | mutants | killed | equivalent (explained) | not killed, not explained | score |",
            "|---|---:|---:|---:|---:|---:|"]
    total = [0, 0, 0, 0]
    for key in sorted(set(by_exercise) | set(targets.TARGETS)):
        mutants = by_exercise.get(key, {})
        n = len(mutants)
        killed = sum(m["status"] in KILLED for m in mutants.values())
        eq = sum(name in equivalent.get(key, {}) for name, m in mutants.items() if m["status"] == "survived")
        bad = n - killed - eq
        score = f"{100 * killed / (n - eq):.0f} %" if n - eq else "— (no mutant)" if not n else "—"
        rows.append(f"| `{key}` | {n} | {killed} | {eq} | {bad} | {score} |")
        total = [total[0] + n, total[1] + killed, total[2] + eq, total[3] + bad]
    n, killed, eq, bad = total
    rows.append(f"| **all** | {n} | {killed} | {eq} | {bad} | {100 * killed / (n - eq):.0f} % |")
    rows += ["", "The equivalent mutants (solutions/equivalent_mutants.json), and why each computes the same thing:", ""]
    for key in sorted(equivalent):
        for name, why in sorted(equivalent[key].items()):
            added = next((line[1:].split("  #")[0].strip() for line in why["diff"].splitlines() if line.startswith("+")), "")
            rows.append(f"- `{key}`, `{name.rsplit('.', 1)[1]}`: `{added}` — {why['reason']}")
    return "\n".join(rows)


def write_table(by_exercise: dict, equivalent: dict) -> None:
    text = DOC.read_text(encoding="utf-8")
    start, end = text.index(BEGIN) + len(BEGIN), text.index(END)
    DOC.write_text(text[:start] + "\n" + table(by_exercise, equivalent) + "\n" + text[end:], encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--report", action="store_true", help="report on the last run without running mutmut")
    parser.add_argument("--check", action="store_true", help="compare with the stored results instead of writing them")
    args = parser.parse_args()
    if sys.version_info < (3, 10):       # mutmut 3 (requirements-dev.txt) is not installed there
        print(f"mutation check NOT RUN: mutmut 3 needs Python 3.10 or newer (this is "
              f"{sys.version_info.major}.{sys.version_info.minor}); CI runs it on 3.11", file=sys.stderr)
        return 0 if args.check else 1
    if not args.report:
        # A fresh run: mutmut caches results by the mutated functions and the tests, but the checkers
        # (the code that decides) live outside its tree, so a cached verdict could be stale.
        shutil.rmtree(ROOT / "mutants", ignore_errors=True)
        mutmut("run", check=False)
    return report(check=args.check)


if __name__ == "__main__":
    raise SystemExit(main())
