"""A class of lesson-01 submissions for tests/test_assignment_sandbox.py: honest students, and one
attacker per attack of issue 31 and of the instructor's trial (docs/grading.md, "The sandbox").

Each attack is the code a student could put in a cell. They find the grader's folders the way the
trial did, from the command lines in /proc; as a safety latch, they only touch a path that contains
MARK (the test's folder name), so that a run against a grader without the sandbox (which is how this
class shows the old grader's holes) harms nothing but the test's own files.
"""
from __future__ import annotations

import json
import textwrap
from pathlib import Path

import nbformat

from assignment_submissions import lesson01_references, put, with_answers

AID = "01_self_attention_vi"
MARK = "attack-class"
DAEMON_MARK = "ATTNLAB_ATTACK_DAEMON"

FIND = textwrap.dedent(f'''
    import glob as _g, json as _j, os as _o
    def _grader_dirs():
        """Folders named on the grader's command line (SUBMISSIONS, --out), as the trial found them."""
        found = set()
        for pid in _o.listdir("/proc"):
            try:
                argv = open(f"/proc/{{pid}}/cmdline", "rb").read().decode("utf-8", "replace").split("\\0")
            except OSError:
                continue
            if any("tools.assignments.grade" in a for a in argv):
                found |= {{a for a in argv if a.startswith("/") and {MARK!r} in a and _o.path.isdir(a)}}
        return sorted(found)
    def _other_notebooks():
        mine = _o.path.realpath(_o.getcwd())
        return [p for d in _grader_dirs() for p in _g.glob(_o.path.join(d, "*", "*", "*.ipynb"))
                if not _o.path.realpath(p).startswith(mine) and {MARK!r} in p]
''')

EVERYTHING_PASSES = textwrap.dedent('''
    import sys as _s
    import attnlab.exercises.l01
    class _Ok:
        ok, text, key = True, "✅ Đúng rồi!", "ok"
    for _name, _m in list(_s.modules.items()):
        if not _name.startswith("attnlab.exercises"):
            continue
        for _n in dir(_m):
            if _n.startswith("evaluate_"):
                setattr(_m, _n, lambda *a, **k: _Ok())
            elif _n.startswith("check_"):
                setattr(_m, _n, lambda *a, **k: print("✅ Đúng rồi!"))
        for _e in (getattr(_m, "EXERCISES", None) or {}).values():
            try:
                object.__setattr__(_e, "judge", lambda *a, **k: (True, "ok", {}))
            except Exception:
                pass
''')

WRONG = {   # wrong answers of the right shapes: a patched comparison would call them right
    "l01-softmax": "def my_softmax(x):\n    return x\n",
    "l01-attention": ("import torch\n\ndef my_attention(q, k, v):\n"
                      "    return torch.zeros(*q.shape[:-1], v.shape[-1]), torch.zeros(*q.shape[:-1], k.shape[-2])\n"),
    "l01-dot_std": "def dot_std(d_k, sigma=1.0):\n    return 1.0\n",
}

ATTACKS = {
    # issue 31: redefine the checkers (and the registry's judges) in the first cell
    "evil_redefine": (EVERYTHING_PASSES, WRONG),
    # issue 31: monkeypatch torch/numpy/math comparisons
    "evil_patch_torch": (textwrap.dedent('''
        import math, numpy as np, torch
        torch.allclose = lambda *a, **k: True
        torch.Tensor.allclose = lambda *a, **k: True
        torch.equal = lambda *a, **k: True
        torch.isclose = lambda a, b, *r, **k: torch.ones_like(torch.as_tensor(a), dtype=torch.bool)
        torch.testing.assert_close = lambda *a, **k: None
        np.allclose = lambda *a, **k: True
        np.isclose = lambda *a, **k: True
        math.isclose = lambda *a, **k: True
        import os
        os.environ["ATTNLAB_LANG"], os.environ["OMP_NUM_THREADS"] = "en", "64"
        '''), WRONG),
    # issue 31: read the grader's arguments, copy a classmate's answers (own cells empty)
    "evil_copy": (FIND + textwrap.dedent('''
        for _p in _other_notebooks():
            try:
                _cells = [c for c in _j.load(open(_p))["cells"]
                          if c.get("metadata", {}).get("nbgrader", {}).get("grade_id", "").endswith("-answer")]
            except Exception:
                continue
            _src = ["".join(c["source"]) for c in _cells]
            if _src and all("TODO" not in s for s in _src):
                for _s in _src:
                    exec(_s, globals())
                break
        for _d in ("/work", "/root", _o.path.expanduser("~"), "/srv", "/home"):   # solutions/, anyone's files
            for _p in _g.glob(_o.path.join(_d, "**", "solutions", "l01.py"), recursive=True)[:1]:
                if "my_softmax" not in globals():
                    exec(open(_p).read(), globals())
        '''), {"l01-attention": "", "l01-dot_std": ""}),
    # issue 31: overwrite the classmates' notebooks and leave a file among the submissions
    "evil_overwrite": (FIND + textwrap.dedent('''
        for _p in _other_notebooks():
            try:
                open(_p, "w").write("{ broken by evil_overwrite")
                open(_o.path.join(_o.path.dirname(_o.path.dirname(_o.path.dirname(_p))), "PWNED.txt"), "w").write("x")
            except OSError:
                pass
        '''), {}),
    # issue 31: append to the package's exercises/l01.py (editable install): every later run passes
    "evil_package": (textwrap.dedent('''
        import attnlab.exercises.l01 as _l01
        try:
            with open(_l01.__file__, "a") as _f:
                _f.write("\\n\\nclass _Ok:\\n    ok, text, key = True, '✅ Đúng rồi!', 'ok'\\n"
                         "for _n in [n for n in list(globals()) if n.startswith('evaluate_')]:\\n"
                         "    globals()[_n] = lambda *a, **k: _Ok()\\n"
                         "    globals()[_n.replace('evaluate_', 'check_')] = lambda *a, **k: print(_Ok.text)\\n")
        except OSError:
            pass
        '''), {}),
    # issue 31: a file in the grading user's IPython startup folder, run by every later kernel
    "evil_startup": (textwrap.dedent(f'''
        import os
        _d = os.path.expanduser("~/.ipython/profile_default/startup")
        try:
            os.makedirs(_d, exist_ok=True)
            open(os.path.join(_d, "00-evil.py"), "w").write("import attnlab.exercises.l01\\n" + {EVERYTHING_PASSES!r})
        except OSError:
            pass
        '''), {}),
    # issue 31: a background process that outlives its kernel and rewrites grades.csv afterwards
    "evil_daemon": (FIND + textwrap.dedent(f'''
        import subprocess, sys
        _code = """# {DAEMON_MARK}
        import csv, os, time
        me, out, deadline = "evil_daemon", None, time.time() + 1800
        while time.time() < deadline:
            grader = False
            for pid in os.listdir("/proc"):
                try:
                    argv = open(f"/proc/{{pid}}/cmdline", "rb").read().decode().split("\\\\0")
                except OSError:
                    continue
                if any("tools.assignments.grade" in a for a in argv):
                    grader = True
                    if "--out" in argv:
                        out = argv[argv.index("--out") + 1]
            if out and "{MARK}" in out and not grader and os.path.exists(os.path.join(out, "grades.csv")):
                path = os.path.join(out, "grades.csv")
                rows = list(csv.DictReader(open(path, encoding="utf-8")))
                for r in rows:
                    if r["student"] == me:
                        r["points"], r["note"] = r["max_points"], ""
                with open(path, "w", newline="", encoding="utf-8") as f:
                    w = csv.DictWriter(f, list(rows[0]))
                    w.writeheader()
                    w.writerows(rows)
                break
            time.sleep(0.2)
        """
        subprocess.Popen([sys.executable, "-c", _code], start_new_session=True, stdin=subprocess.DEVNULL,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        '''), {}),
    # the trial: stored outputs forged to show "correct", wrong code (only the stored outputs say so)
    "evil_forged_output": ("", WRONG),
    # results forged in the kernel: whatever the probe saves becomes "everything passed"
    "evil_forged_results": (textwrap.dedent('''
        import torch
        _save = torch.save
        torch.save = lambda obj, f, *a, **k: _save({"ok": True, "passed": True, "correct": True}, f)
        '''), WRONG),
}

WARNING = "UserWarning in English, with the kernel's file path /tmp/ipykernel_1/2.py:3"
TAMPER_NOTES = ("may tamper", "stored output says correct", "was edited or deleted")


def _answers(first: str, rest: dict, refs: dict) -> dict:
    """Answer cells: ``first`` (the attack) then the first exercise's answer; ``rest`` for the others."""
    answers = {g: rest.get(g, "") for g in refs}
    answers["l01-softmax"] = first + "\n" + rest.get("l01-softmax", "")
    return answers


def build_class(folder: Path, release: Path) -> dict:
    """Write the class under ``folder`` (whose path must contain MARK); return
    {student: {grade_id: expected points}} and the set of attackers."""
    assert MARK in str(folder), folder
    refs = lesson01_references()
    full = {g: 1.0 for g in refs}
    zero = {g: 0.0 for g in refs}
    expected = {}

    put(folder, "honest_full", AID, with_answers(release, {      # a warning, as PyTorch prints them: not on the page
        **refs, "l01-softmax": refs["l01-softmax"] + textwrap.dedent(f'''
            import warnings
            _reference = my_softmax
            def my_softmax(x):
                warnings.warn({WARNING!r})
                return _reference(x)
            ''')}))
    expected["honest_full"] = full
    put(folder, "honest_partial", AID, with_answers(release, {**refs, "l01-attention": refs["l01-attention"].replace(
        "math.sqrt(d_k)", "1.0").replace("d_k ** 0.5", "1.0")}))
    expected["honest_partial"] = {**full, "l01-attention": 0.0}
    put(folder, "honest_todo", AID, with_answers(release, {}))
    expected["honest_todo"] = zero
    put(folder, "victim", AID, with_answers(release, refs))
    expected["victim"] = full
    put(folder, "zz_later", AID, with_answers(release, {}))          # graded last: nothing may reach it
    expected["zz_later"] = zero

    nb = with_answers(release, {"l01-softmax": refs["l01-softmax"]})   # honest work, metadata flipped (the trial)
    for cell in nb.cells:
        meta = cell.metadata.get("nbgrader", {})
        if meta.get("grade_id") == "l01-softmax":
            meta["points"] = 10
        elif meta.get("grade_id") == "l01-attention":
            meta["grade"] = False
        elif meta.get("grade_id") == "l01-attention-answer":
            meta["grade"], meta["points"] = True, 5
    put(folder, "honest_flipped_flags", AID, nb)
    expected["honest_flipped_flags"] = {**zero, "l01-softmax": 1.0}

    put(folder, "honest_bare_except", AID, with_answers(release, {   # a loop that swallows the interrupt
        **refs, "l01-attention": "import time\ndone = False\nwhile not done:\n    try:\n        time.sleep(0.5)\n"
                                 "    except:\n        pass\n" + refs["l01-attention"]}))
    expected["honest_bare_except"] = {**full, "l01-attention": 0.0}

    for student, (code, rest) in ATTACKS.items():
        nb = with_answers(release, _answers(code, rest, refs))
        if student == "evil_forged_output":
            for cell in nb.cells:
                if cell.metadata.get("nbgrader", {}).get("grade"):
                    cell.outputs = [nbformat.v4.new_output("stream", name="stdout",
                                                           text="✅ Đúng rồi! Khớp torch.softmax trên mọi đầu vào.\n")]
                    cell.execution_count = 3
        put(folder, student, AID, nb)
        expected[student] = zero
    return expected


def snapshot(*roots: Path) -> dict:
    """path -> bytes of every file under ``roots`` (to compare before and after grading)."""
    files = {}
    for root in roots:
        if root.is_file():
            files[str(root)] = root.read_bytes()
            continue
        for p in sorted(root.rglob("*")) if root.exists() else ():
            if p.is_file() and "__pycache__" not in p.parts:
                files[str(p)] = p.read_bytes()
    return files


def daemon_pids() -> list[int]:
    """Processes whose command line carries the daemon attack's mark."""
    import os
    found = []
    for pid in os.listdir("/proc"):
        try:
            if DAEMON_MARK.encode() in open(f"/proc/{pid}/cmdline", "rb").read() and int(pid) != os.getpid():
                found.append(int(pid))
        except (OSError, ValueError):
            pass
    return found


def as_json(x) -> str:
    return json.dumps(x, indent=1, sort_keys=True)
