"""The README's promises, tested: one fresh venv per Python, plus a "floor" environment.

    python3 tools/matrix.py [ENV ...] [--workdir DIR] [--results FILE] [--keep] [--freeze]
    make matrix [MATRIX="3.9 3.10 floor"]

ENV is a Python version (3.9 ... 3.13), "floor" or "newest". For each: create a venv with tools/venvs.py
(from `pyenv prefix X` or `pythonX`), install the course, run the unit tests (tests/, without the
browser tests), then execute every notebook (lessons_vi, lessons_zh, notebooks) in memory and
require no error, no stderr, no FAIL line, and as many PASS lines as the stored outputs have.
(Allowed, because the stored outputs show them on purpose: an error in a cell tagged
raises-exception whose stored output has the same error; a FAIL line where the stored cell has one.
No stored output has either today.)
- Python 3.11 uses constraints.txt (CI's pins). Another Python uses constraints-py3.X.txt when it
  exists, otherwise the ranges of requirements*.txt (--freeze then writes the passing environment's
  versions to constraints-py3.X.txt, for `make lab PYTHON=python3.X`).
- "floor" (Python FLOOR_PYTHON): every package of requirements.txt at its lower bound (name==bound),
  plus ipywidgets 7.7.1 (Colab's); test tools from requirements-dev.txt at any version.
- "newest" (Python NEWEST_PYTHON): what a fresh `pip install` resolves today. The newest release on
  the index of each of NEWEST (asked with `pip index versions` from that Python, so a release that
  needs a newer Python is not taken) is pinned with ==, everything else resolves from the ranges.
  The machine's own pip constraint (a cap on torch, set for this machine's disk) is NOT applied:
  the point is the release a student gets.
Downloads a lot (torch with CUDA libraries off the CPU-only index). Each venv is removed afterwards
unless --keep. Results are appended as JSON lines to --results and printed as a Markdown table.
Never writes a notebook.
"""
from __future__ import annotations

import argparse
import datetime
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))
import venvs  # noqa: E402

FLOOR_PYTHON = "3.9"
NEWEST_PYTHON = "3.13"   # the newest Python the course supports (venvs.SUPPORTED[-1])
NEWEST = ("torch", "numpy", "matplotlib", "ipywidgets", "jupyterlab", "nbval")
# Extra constraints for one Python's ranges, each with its reason (they go into constraints-py3.X.txt).
EXTRA = {
    "3.9": ["pillow<11.3  # matplotlib 3.9.4, the last for Python 3.9, calls Image.fromarray(mode=...),"
            " deprecated in Pillow 11.3: a DeprecationWarning on every PDF export"],
}
# The tests that start the hub (as root, with `make hub-proxy`'s Node proxy and CI's Python): CI's alone.
HUB_TESTS = ("test_hub.py", "test_hub_security.py")
NOT_FLOORED = {"jupyterlab"}   # the front end: no test imports it (it is installed, at any version)
# The lesson folders from the one source (read as JSON: this tool runs without torch).
NOTEBOOK_DIRS = tuple(info["lessons"] for info in json.loads(
    (ROOT / "shared" / "attnlab" / "data" / "languages.json").read_text(encoding="utf-8"))["languages"].values()
    if info["lessons"]) + ("notebooks",)
REPORTED = ("torch", "numpy", "matplotlib", "matplotlib-inline", "ipywidgets", "ipython", "ipykernel", "tqdm",
            "jupyterlab", "nbval")
ENVS = (*venvs.SUPPORTED, "floor", "newest")


def interpreter(version: str) -> str:
    try:
        prefix = subprocess.run(["pyenv", "prefix", version], capture_output=True, text=True, check=True)
        candidates = sorted(pathlib.Path(p) for p in prefix.stdout.split())
        for c in candidates:
            if (c / "bin" / "python").exists():
                return str(c / "bin" / "python")
    except (OSError, subprocess.CalledProcessError):
        pass
    found = shutil.which(f"python{version}")
    if not found:
        raise SystemExit(f"no Python {version}: neither `pyenv prefix {version}` nor python{version} found")
    return found


def requirement_floors(path: pathlib.Path = ROOT / "requirements.txt") -> dict[str, str]:
    """{name: lower bound} of every `name>=X` line."""
    floors = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        m = re.match(r"\s*([A-Za-z0-9_.\-]+)\s*>=\s*([0-9][0-9.]*)", line.split("#")[0])
        if m:
            floors[m.group(1).lower()] = m.group(2)
    return floors


def floor_constraints(path: pathlib.Path) -> pathlib.Path:
    lines = [f"# python: {FLOOR_PYTHON}", "# every library of requirements.txt at its lower bound"]
    lines += [f"{name}=={bound}" for name, bound in requirement_floors().items() if name not in NOT_FLOORED]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def newest_releases(python: str, names=NEWEST) -> dict[str, str]:
    """{name: the newest release on pip's index that installs on this Python} (no pre-releases)."""
    found = {}
    for name in names:
        r = subprocess.run([python, "-m", "pip", "index", "versions", name], capture_output=True, text=True)
        m = re.match(rf"{re.escape(name)} \(([^)]+)\)", r.stdout.strip(), re.IGNORECASE)
        if r.returncode != 0 or not m:
            raise _Stop(f"pip index versions {name} failed: {(r.stdout + r.stderr).strip()[:300]}")
        found[name] = m.group(1)
    return found


def newest_constraints(path: pathlib.Path, releases: dict[str, str]) -> pathlib.Path:
    lines = [f"# python: {NEWEST_PYTHON}", "# the newest release of each, as found by tools/matrix.py"]
    path.write_text("\n".join(lines + [f"{n}=={v}" for n, v in releases.items()]) + "\n", encoding="utf-8")
    return path


def pip_config_constraints(python: str) -> list[str]:
    """Constraint files from pip's own configuration (uv does not read pip.conf)."""
    out = subprocess.run([python, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
    files = []
    for line in out.splitlines():
        key, _, value = line.partition("=")
        if key.endswith(".constraint"):
            files += [f.strip("'\" ") for f in value.split()]
    return [f for f in files if pathlib.Path(f).is_file()]


def resolve(python: str, version: str, constraints: pathlib.Path | None, out: pathlib.Path, log,
            machine_caps: bool = True) -> pathlib.Path | None:
    """Pin the whole environment with uv when it is installed (pip's resolver backtracks for
    tens of minutes on the floor set; uv answers in seconds). None: let pip resolve."""
    uv = shutil.which("uv") or os.environ.get("UV")
    if not uv:
        print("uv not found: pip resolves the ranges itself (slow for the floor set)", file=log, flush=True)
        return constraints
    extra = None
    if constraints is None and EXTRA.get(version):
        extra = out.with_name(f"extra-{version}.txt")
        extra.write_text("\n".join(EXTRA[version]) + "\n", encoding="utf-8")
    caps = pip_config_constraints(python) if machine_caps else []
    cons = [str(c) for c in [constraints, extra, *caps] if c]
    cmd = [uv, "pip", "compile", "-q", "--python", python, "--no-header", "--no-annotate",
           *[x for c in cons for x in ("-c", c)], str(ROOT / "requirements-dev.txt"), "-o", str(out)]
    if sh(cmd, log) != 0:
        return None
    out.write_text(f"# python: {version}\n" + out.read_text(encoding="utf-8"), encoding="utf-8")
    return out


STEP_TIMEOUT = 4 * 3600     # seconds for one step (the unit tests took over an hour at load 20-50 on 2 cores)


def sh(cmd: list[str], log, env=None, timeout: float | None = None) -> int:
    """Run one step; its exit code, or 124 after `timeout` seconds (the step and every process it
    started are stopped, and the row goes on to be recorded: a slow machine fails a step, never the run)."""
    timeout = STEP_TIMEOUT if timeout is None else timeout
    print("+", " ".join(cmd), file=log, flush=True)
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        code = 124
        print(f"  stopped: still running after {timeout:.0f} s", file=log, flush=True)
    print(f"  exit {code} after {time.perf_counter() - start:.0f} s", file=log, flush=True)
    return code


def clean_env(machine_caps: bool = True) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "VIRTUAL_ENV", "ATTNLAB_W7_PYTHON")}
    env.update(OMP_NUM_THREADS="1", PYTHONHASHSEED="0", MPLBACKEND="Agg")
    if not machine_caps:     # pip's configured constraint files are replaced by an empty one
        env["PIP_CONSTRAINT"] = os.devnull
    return env


def run_env(name: str, workdir: pathlib.Path, log, keep: bool, freeze: bool, jobs: int = 0) -> dict:
    version = {"floor": FLOOR_PYTHON, "newest": NEWEST_PYTHON}.get(name, name)
    python = interpreter(version)
    caps = name != "newest"
    venv = workdir / f"venv-{name}"
    row = {"env": name, "python": version, "commit": git("rev-parse", "--short", "HEAD"),
           "dirty": bool(git("status", "--porcelain", "--untracked-files=no")),
           "started": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")}
    if name == "floor":
        cons = floor_constraints(workdir / "constraints-floor.txt")
        row["source"] = "floor: " + ", ".join(f"{n}=={b}" for n, b in requirement_floors().items())
    elif name == "newest":
        try:
            row["newest"] = newest_releases(python)
        except _Stop as err:
            print(err, file=log, flush=True)
            row.update(steps={"resolve": 1}, result="FAIL")
            return row
        cons = newest_constraints(workdir / "constraints-newest.txt", row["newest"])
        row["source"] = "newest: " + ", ".join(f"{n}=={v}" for n, v in row["newest"].items())
        print(f"{row['source']} (the machine's pip constraints are not applied)", file=log, flush=True)
    else:
        cons = venvs.default_constraints(version)
        row["source"] = cons.name if cons.is_file() else "ranges"
        if not cons.is_file():
            cons = None
    steps = {}
    try:
        ranges = cons is None
        if name in ("floor", "newest") or ranges:
            cons = resolve(python, version, cons, workdir / f"lock-{name}.txt", log, machine_caps=caps)
            if cons is None and not ranges:
                steps["resolve"] = 1
                raise _Stop
        cmd = [python, str(ROOT / "tools" / "venvs.py"), str(venv)]
        cmd += ["--constraints", str(cons) if cons else "none"]
        if shutil.which("uv") and version != venvs.PINNED:   # 3.11 keeps pip (its CPU torch lies in pip's find-links)
            cmd += ["--installer", "uv"]
        steps["install"] = sh(cmd, log, env=clean_env(caps))
        if steps["install"] == 0:
            vpy = str(venvs.venv_python(venv))
            versions = json.loads(subprocess.run(
                [vpy, "-c", "import importlib.metadata as m, json, sys; print(json.dumps({n: m.version(n) "
                 f"for n in {list(REPORTED)!r}}} | {{'python': sys.version.split()[0]}}))"],
                capture_output=True, text=True, env=clean_env()).stdout or "{}")
            row["versions"] = versions
            print(json.dumps(versions), file=log, flush=True)
            if name == "newest":     # pinned with ==: anything else is a broken install
                wrong = {n: versions.get(n) for n, v in row["newest"].items() if versions.get(n) != v}
                steps["newest"] = int(bool(wrong))
                if wrong:
                    print(f"installed versions differ from the newest releases: {wrong}", file=log, flush=True)
            env = clean_env(caps)    # newest: the tests' own pip runs see no machine cap either
            # Not here, in CI (`make test`, Python 3.11): the browser tests; the hub's tests, which need
            # `make hub-proxy` (Node) and run the hub on CI's Python; and the wheel's nbval run, which
            # compares against the stored outputs of the pinned environment (this step's notebook run
            # below executes every notebook on this Python instead).
            steps["unit"] = sh([vpy, "-m", "pytest", "-q", "-n", str(jobs), "tests", "-m", "not browser",
                                *(f"--ignore=tests/{hub_test}" for hub_test in HUB_TESTS),
                                "--deselect=tests/test_wheel.py::test_lessons_run_against_the_installed_package"],
                               log, env=env)
            steps["notebooks"] = sh([vpy, str(ROOT / "tools" / "matrix.py"), "--notebooks"], log, env=env)
            if freeze and ranges and steps["unit"] == 0 and steps["notebooks"] == 0:
                frozen = subprocess.run([vpy, "-m", "pip", "freeze", "--exclude-editable"],
                                        capture_output=True, text=True, check=True).stdout
                out = venvs.default_constraints(version)
                out.write_text(
                    f"# python: {version}\n# Exact versions that passed `make matrix` on Python {version} "
                    f"(commit {row['commit']}, {row['started']}).\n# Written by tools/matrix.py --freeze; "
                    f"CI and the stored outputs use constraints.txt (Python {venvs.PINNED}).\n"
                    + "".join(line + "\n" for line in frozen.splitlines()
                              if not line.lower().startswith("attnlab")), encoding="utf-8")
                row["froze"] = out.name
    except _Stop:
        pass
    finally:
        if not keep:
            shutil.rmtree(venv, ignore_errors=True)
    row["steps"] = steps
    row["result"] = "pass" if all(steps.get(k) == 0 for k in ("install", "unit", "notebooks")) \
        and not any(steps.values()) else "FAIL"
    return row


class _Stop(Exception):
    """An environment that cannot be built: record it and go on with the next."""


def git(*args: str) -> str:
    return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True).stdout.strip()


# ---- notebooks (runs inside the matrix venv) -------------------------------------------------

def verdict_words() -> tuple[set[str], set[str]]:
    words = json.loads((ROOT / "shared" / "attnlab" / "messages" / "core.json").read_text(encoding="utf-8"))
    return set(words["pass"].values()), set(words["fail"].values())


def check_lines(text: str, passes: set[str], fails: set[str]) -> tuple[int, list[str]]:
    """(number of PASS lines, the FAIL lines) of a cell's printed text, in any course language."""
    n_pass, failed = 0, []
    for line in text.splitlines():
        s = line.strip()
        if any(s.startswith(w) for w in fails):       # "CHƯA ĐẠT" before "ĐẠT"
            failed.append(s)
        elif any(s.startswith(w) for w in passes):
            n_pass += 1
    return n_pass, failed


def printed(cell) -> str:
    parts = []
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            parts.append(out.get("text", ""))
        elif "data" in out:
            parts.append(out["data"].get("text/plain", ""))
    return "\n".join("".join(p) if isinstance(p, list) else p for p in parts)


def run_notebooks() -> int:
    import nbformat
    from nbclient import NotebookClient

    passes, fails = verdict_words()
    probe = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("import sys; print(sys.executable)")])
    NotebookClient(probe, timeout=120, kernel_name="python3").execute()
    kernel = probe.cells[0].outputs[0]["text"].strip()
    if pathlib.Path(kernel).parent != pathlib.Path(sys.executable).parent:
        print(f"FAIL kernel runs {kernel}, not this venv's {sys.executable}")
        return 1
    bad = 0
    for d in NOTEBOOK_DIRS:
        for path in sorted((ROOT / d).glob("*.ipynb")):
            stored = nbformat.read(path, as_version=4)
            nb = nbformat.read(path, as_version=4)
            for cell in nb.cells:
                if cell.cell_type == "code":
                    cell.outputs, cell.execution_count = [], None
            start = time.perf_counter()
            problems = []
            try:
                NotebookClient(nb, timeout=900, kernel_name="python3", allow_errors=True,
                               resources={"metadata": {"path": str(path.parent)}}).execute()
            except Exception as err:   # a timeout or a dead kernel
                problems.append(f"did not finish: {type(err).__name__}: {str(err)[:200]}")
            n_pass = n_stored = 0
            for i, (cell, old) in enumerate(zip(nb.cells, stored.cells)):
                if cell.cell_type != "code":
                    continue
                stored_errors = {o.get("ename") for o in old.get("outputs", []) if o.get("output_type") == "error"}
                for out in cell.outputs:
                    if out.output_type == "error":
                        tagged = "raises-exception" in cell.metadata.get("tags", [])
                        if tagged and out.ename in stored_errors:   # an on-purpose error, as stored
                            print(f"       note: cell {i} raises {out.ename} on purpose (tagged, as stored)")
                            continue
                        problems.append(f"cell {i}: {out.ename}: {str(out.evalue)[:160]}")
                    if out.output_type == "stream" and out.name == "stderr":
                        problems.append(f"cell {i}: stderr: {out.text[:160]!r}")
                p, failed = check_lines(printed(cell), passes, fails)
                p_old, failed_old = check_lines(printed(old), passes, fails)
                n_pass += p
                n_stored += p_old
                if len(failed) > len(failed_old):    # a FAIL line only where the stored output shows one on purpose
                    problems += [f"cell {i}: {line[:160]}" for line in failed if line not in failed_old]
                elif failed:
                    print(f"       note: cell {i} prints {len(failed)} FAIL line(s) on purpose (as stored)")
            if n_pass != n_stored:
                problems.append(f"{n_pass} PASS lines, the stored outputs have {n_stored}")
            took = time.perf_counter() - start
            print(f"{'ok' if not problems else 'FAIL':4s} {took:5.1f}s {n_pass:3d} PASS  {path.relative_to(ROOT)}")
            for p in problems:
                print("       " + p)
            bad += bool(problems)
    print(f"notebooks: {bad} with problems")
    return 1 if bad else 0


def table(rows: list[dict]) -> str:
    head = "| env | Python | torch | numpy | matplotlib | ipywidgets | jupyterlab | nbval | commit | date | " \
           "unit tests | notebooks | result |\n|---|---|---|---|---|---|---|---|---|---|---|---|---|"
    out = [head]
    for r in rows:
        v = r.get("versions", {})
        s = r.get("steps", {})
        mark = lambda k: "—" if k not in s else ("pass" if s[k] == 0 else "FAIL")  # noqa: E731
        out.append(f"| {r['env']} | {v.get('python', r['python'])} | {v.get('torch', '?')} | {v.get('numpy', '?')} | "
                   f"{v.get('matplotlib', '?')} | {v.get('ipywidgets', '?')} | {v.get('jupyterlab', '?')} | "
                   f"{v.get('nbval', '?')} | {r['commit']}{'+' if r.get('dirty') else ''} | {r['started'][:10]} | "
                   f"{mark('unit')} | {mark('notebooks')} | {r['result']} |")
    return "\n".join(out)


def main(argv: list[str]) -> int:
    global STEP_TIMEOUT
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("envs", nargs="*", default=list(ENVS))
    ap.add_argument("--workdir", type=pathlib.Path, default=None)
    ap.add_argument("--results", type=pathlib.Path, default=ROOT / "matrix-results.jsonl")
    ap.add_argument("--keep", action="store_true", help="keep each venv (default: remove it)")
    ap.add_argument("--freeze", action="store_true", help="write constraints-py3.X.txt from a passing ranges env")
    ap.add_argument("--jobs", type=int, default=0, help="pytest-xdist workers for the unit tests (default 0: one process)")
    ap.add_argument("--step-timeout", type=float, default=STEP_TIMEOUT, help="seconds one step may take (default %(default)s)")
    ap.add_argument("--table", action="store_true", help="only print the table of the --results file")
    ap.add_argument("--notebooks", action="store_true", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.notebooks:
        return run_notebooks()
    STEP_TIMEOUT = a.step_timeout
    if a.table:
        print(table([json.loads(line) for line in a.results.read_text(encoding="utf-8").splitlines() if line]))
        return 0
    for e in a.envs:
        if e not in ENVS:
            ap.error(f"unknown env {e!r}: one of {', '.join(ENVS)}")
    workdir = a.workdir or pathlib.Path(tempfile.mkdtemp(prefix="attnlab-matrix-"))
    workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for e in a.envs:
        logpath = workdir / f"{e}.log"
        print(f"== {e}: log {logpath}", flush=True)
        with open(logpath, "w", encoding="utf-8") as log:
            row = run_env(e, workdir, log, a.keep, a.freeze, a.jobs)
        row["log"] = str(logpath)
        rows.append(row)
        with open(a.results, "a", encoding="utf-8") as f:
            f.write(json.dumps(row) + "\n")
        print(table([row]).splitlines()[-1], flush=True)
    print(table(rows))
    return 0 if all(r["result"] == "pass" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
