"""One submission from the grader's side: what the sandbox executes, and the verdicts, decided here.

``units()`` turns a notebook (as nbgrader restored it: locked cells back to the instructor's version)
into what the harness executes in the student's kernel: every code cell in order, except that the
visible checker call of an exercise is replaced by the exercise's PROBE on the grader's seed, which
only records what the student's code returns (``attnlab.exercises.EXERCISES[key].probe``, see
/work/brief/CHECKERS.md). ``verdicts()`` then judges those results in this process, which never runs
student code: ``load_results`` (a safe format), ``judge`` (references computed here, with a clean
torch), worded in the student's language. An exercise without a probe in the registry falls back to
its hidden test run in the kernel, and its row says so (``in_kernel``).
"""
from __future__ import annotations

import ast
import base64
import importlib
import json
import re
import tempfile
from pathlib import Path

HIDDEN = re.compile(r"^\s*assert\s+attnlab\.exercises\.(\w+)\.evaluate_(\w+)\((.*)\)\.ok\b", re.M)
BEGIN_HIDDEN = "### BEGIN HIDDEN TESTS"
RESULTS_CAP = 16 << 20        # bytes of one exercise's results the judge reads


def hidden_call(source: str) -> tuple[str, str] | None:
    """(registry key "l01.softmax", the call's arguments "my_softmax") of a source notebook's checker cell."""
    m = HIDDEN.search(source)
    return (f"{m.group(1)}.{m.group(2)}", m.group(3)) if m else None


def _visible(source: str) -> str:
    return source.split(BEGIN_HIDDEN)[0].rstrip()


def _without_check_call(source: str) -> str:
    """A checker cell's lesson lines: the visible part without its final ``….check_x(...)`` call."""
    code = _visible(source)
    try:
        body = ast.parse(code).body
    except SyntaxError:
        return code
    last = body[-1] if body else None
    if (isinstance(last, ast.Expr) and isinstance(last.value, ast.Call)
            and isinstance(last.value.func, ast.Attribute) and last.value.func.attr.startswith("check_")):
        return "\n".join(code.splitlines()[:last.lineno - 1]).rstrip()
    return code


def probe_code(registry: str, key: str, args: str, seed: int, root: str) -> str:
    """The one statement the kernel runs for an exercise: probe on the seed, save the results."""
    m = f"__import__({registry!r}, fromlist=['EXERCISES', '_common'])"
    return (f"{m}._common.save_results({root + '/out/' + key + '.pt'!r}, "
            f"{m}.EXERCISES[{key!r}].probe({args}, seed={int(seed)}))")


def units(nb, exercises: dict, probes: set, registry: str, seed: int, root: str) -> list[dict]:
    """What the harness runs, in order. ``exercises``: grade_id -> {"key", "args"} of the graded
    exercises; ``probes``: the registry keys that have a probe."""
    todo = []
    for i, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        meta = cell.metadata.get("nbgrader", {})
        gid = meta.get("grade_id", "")
        ex = exercises.get(gid) if meta.get("locked") else None
        base = {"cell": i, "grade_id": gid}
        if ex is not None and ex["key"] not in probes:              # no probe yet: the hidden test, in the kernel
            todo.append({**base, "kind": "in_kernel", "key": ex["key"], "code": cell.source})
            continue
        code = _without_check_call(cell.source) if meta.get("locked") and ".check_" in cell.source else cell.source
        if code.strip():
            todo.append({**base, "kind": "cell", "code": code})
        if ex is not None:
            todo.append({**base, "kind": "probe", "key": ex["key"],
                         "code": probe_code(registry, ex["key"], ex["args"], seed, root)})
    for n, unit in enumerate(todo):
        unit["id"] = f"u{n}"
    return todo


class Registry:
    """The exercise registry the grader judges with (``attnlab.exercises`` unless a test says otherwise)."""

    def __init__(self, module: str):
        self.module = module
        mod = importlib.import_module(module)
        self.exercises = dict(getattr(mod, "EXERCISES", {}) or {})
        self.common = getattr(mod, "_common", None)

    @property
    def probes(self) -> set:
        return set(self.exercises) if self.common is not None and hasattr(self.common, "load_results") else set()

    def load(self, blob: dict) -> dict | None:
        """The results of one probe as sent back by the sandbox (base64 bytes), or None if unreadable."""
        if not isinstance(blob, dict) or not isinstance(blob.get("data"), str):
            return None
        try:
            data = base64.b64decode(blob["data"], validate=True)
        except ValueError:
            return None
        if len(data) > RESULTS_CAP:
            return None
        with tempfile.NamedTemporaryFile(suffix=".pt") as f:
            f.write(data)
            f.flush()
            try:
                results = self.common.load_results(f.name)
            except Exception:                     # hostile or broken: no results
                return None
        return results if isinstance(results, dict) else None

    def model(self, stem: str, lang: str):
        """The lesson's trained model as the probes record it (``{"config", "state_dict"}``), from the
        package checkpoint the assignment's context cell loads; None where the registry has none."""
        try:
            data = importlib.import_module(f"{self.module}._models").checkpoint_data
            return data(stem[:2], lang)
        except Exception:                        # no such lesson model: the judge gets nothing to trust
            return None

    def verdict(self, key: str, results: dict, seed: int, lang: str):
        """Feedback(ok, text, key) of the judge on ``results`` (worded as the lesson's checker words it)."""
        ex = self.exercises[key]
        if hasattr(ex, "verdict"):                  # attnlab.exercises: judge and wording in one call
            return ex.verdict(results, seed=seed, lang=lang)
        return self.common.evaluate(ex.name, lambda: ex.judge(results, seed=seed), lang)


# Python 3.13 reports a cell that ends in mid-statement as _IncompleteInputError, a private subclass
# of SyntaxError: what a student reads (and a checker is judged on) is the public name.
PUBLIC_ERROR_NAMES = {"_IncompleteInputError": "SyntaxError"}


def error_name(err: dict) -> str:
    """The name of a cell's error (the kernel's ``ename``), as Python documents it."""
    name = str(err.get("ename", "Error"))
    return PUBLIC_ERROR_NAMES.get(name, name)


def error_data(answer: dict | None) -> dict:
    """What a probe that could not save its results gets judged on: the unit's error as data."""
    if not answer:
        return {"error": {"type": "NotRun", "message": "", "cause": None}}
    err = answer.get("error") or {}
    kind = {"timeout": "Timeout", "stuck": "Timeout", "died": "KernelDied"}.get(answer.get("status"))
    return {"error": {"type": kind or error_name(err)[:80],
                      "message": str(err.get("evalue", "")).splitlines()[0][:300] if err.get("evalue") else "",
                      "cause": None}}


def answer_sources(nb) -> dict:
    """grade_id of an exercise -> the source of its answer cell as handed in."""
    found = {}
    for cell in nb.cells:
        gid = cell.metadata.get("nbgrader", {}).get("grade_id", "")
        if gid.endswith("-answer") and cell.cell_type == "code":
            found[gid[: -len("-answer")]] = cell.source
    return found


def parse_answer(answer) -> dict:
    """The harness's answer, checked for shape: {unit id: {"status", "text", "error"}} (strings only)."""
    clean = {}
    units_ = answer.get("units") if isinstance(answer, dict) else None
    for uid, a in (units_ or {}).items() if isinstance(units_, dict) else ():
        if not isinstance(a, dict):
            continue
        err = a.get("error") if isinstance(a.get("error"), dict) else None
        clean[str(uid)] = {"status": str(a.get("status", "")), "text": str(a.get("text", ""))[:20000],
                           "error": {k: str(err.get(k, ""))[:20000] for k in ("ename", "evalue", "traceback")}
                           if err else None}
    return clean


def job(nb_text: str, name: str, todo: list, timeout: int, root: str, kernel_env: dict,
        mpl_cache: dict, max_restarts: int) -> dict:
    return {"root": root, "cwd": root + "/work", "notebook": nb_text, "notebook_name": name, "units": todo,
            "timeout": timeout, "start_timeout": 120, "kernel_env": kernel_env, "matplotlib_cache": mpl_cache,
            "max_restarts": max_restarts}


def dumps(x) -> str:
    return json.dumps(x, ensure_ascii=False)


def strip_ansi(text: str) -> str:
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", text)


def write_log(path: Path, todo: list, answers: dict, extra: list[str]) -> bool:
    """Each unit that failed, with its traceback, into ``path``; False (and no file) if none did."""
    lines = list(extra)
    for unit in todo:
        a = answers.get(unit["id"])
        if a is None or a["status"] == "ok":
            continue
        where = f"cell {unit['cell']}" + (f" ({unit['grade_id']})" if unit["grade_id"] else "")
        lines.append(f"--- {where}, {unit['kind']}: {a['status']}")
        if a["error"]:
            lines.append(strip_ansi(a["error"]["traceback"] or f"{a['error']['ename']}: {a['error']['evalue']}"))
    if not lines:
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return True
