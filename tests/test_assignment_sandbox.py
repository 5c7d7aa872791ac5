"""Grades that count (issue 31): each submission in a sandbox, its verdict decided outside it.

One grading run of a class of lesson-01 submissions (tests/assignment_attacks.py): honest students
and one attacker per attack of the issue and of the instructor's trial. Checked: every honest grade
is what the work deserves, every attacker's is what their answers deserve (0) with a note for the
instructor, no file outside the sandbox changed (the submissions, the package, the checkout, the
grader's home), no process is left, and grades.csv is the same seconds after the grader ended.
Then the sandbox's walls one by one (a few small processes, no grading).
"""
from __future__ import annotations

import csv
import os
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from assignment_attacks import AID, ATTACKS, MARK, TAMPER_NOTES, WARNING, build_class, daemon_pids, snapshot

pytest.importorskip("nbgrader", reason="nbgrader (requirements-dev.txt) needs Python 3.11 or newer")
pytestmark = pytest.mark.slow          # grading runs and sandboxes: fresh processes

from tools.assignments import sandbox  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
ASSIGNMENTS = ROOT / "assignments"
RELEASE = ASSIGNMENTS / "release" / AID / "01_self_attention.ipynb"
TIMEOUT = 20            # seconds per cell (the interrupt-swallowing loop costs this, plus the harness's grace)
WHY_NOT = sandbox.why_not()


def _need_sandbox():
    if WHY_NOT:
        if os.environ.get("CI"):
            pytest.fail(f"CI must be able to sandbox (.ci/run installs bubblewrap): {WHY_NOT}")
        pytest.skip(f"no sandbox here: {WHY_NOT}")


def grade(subs: Path, out: Path, home: Path, *extra: str, timeout: int = 900) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]), "OMP_NUM_THREADS": "1",
           "HOME": str(home)}
    return subprocess.run([sys.executable, "-m", "tools.assignments.grade", str(subs), "--out", str(out),
                           "--assignments", str(ASSIGNMENTS), "--timeout", str(TIMEOUT), *extra],
                          cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)


def read_rows(out: Path) -> dict:
    with open(out / "grades.csv", encoding="utf-8") as f:
        return {(r["student"], r["exercise"]): r for r in csv.DictReader(f)}


def _git_status() -> str:
    return subprocess.run(["git", "status", "--porcelain"], cwd=ROOT, capture_output=True, text=True).stdout


@pytest.fixture(scope="module")
def attacked(tmp_path_factory):
    _need_sandbox()
    base = tmp_path_factory.mktemp(MARK)
    subs, out, home = base / "submitted", base / "grades", base / "home"
    home.mkdir()
    expected = build_class(subs, RELEASE)
    watched = (subs, ASSIGNMENTS, ROOT / "shared" / "attnlab", home)
    before, status = snapshot(*watched), _git_status()
    r = grade(subs, out, home, "-j", "2")
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-3000:]
    first = (out / "grades.csv").read_bytes()
    time.sleep(4)                                     # the daemon's moment: the grader has ended
    uids = re.search(r"sandboxes run as uids (\d+)-(\d+)", r.stderr)
    assert uids, r.stderr[-2000:]
    return {"expected": expected, "rows": read_rows(out), "out": out, "first": first, "before": before,
            "after": snapshot(*watched), "status": (status, _git_status()), "base": base, "stdout": r.stdout,
            "uids": range(int(uids.group(1)), int(uids.group(2)) + 1)}


def test_every_grade_is_what_the_answers_deserve(attacked):
    rows, wrong = attacked["rows"], []
    for student, want in attacked["expected"].items():
        for gid, points in want.items():
            row = rows[(student, gid.replace("-", "."))]
            if float(row["points"]) != points:
                wrong.append(f"{student} {gid}: {row['points']} (want {points}) note={row['note']!r}")
    assert not wrong, "\n".join(wrong)


def test_every_attacker_is_noted_and_no_honest_student_is(attacked):
    rows = attacked["rows"]
    for student in attacked["expected"]:
        notes = " ".join(r["note"] for (s, _), r in rows.items() if s == student)
        flagged = any(n in notes for n in TAMPER_NOTES)
        if student in ATTACKS:
            assert flagged, (student, notes)
        elif student == "honest_flipped_flags":
            assert "was edited or deleted" in notes and "may tamper" not in notes, notes
        else:
            assert not flagged, (student, notes)
    bare = rows[("honest_bare_except", "l01.attention")]["note"]
    assert "no result within" in bare and "tracebacks: logs/honest_bare_except/" in bare, bare
    assert (attacked["out"] / "logs" / "honest_bare_except" / f"{AID}.txt").is_file()


def test_no_file_outside_the_sandbox_changed(attacked):
    before, after = attacked["before"], attacked["after"]
    tools = [str(attacked["base"] / "home" / d) for d in (".cache", ".rustup")]    # the grader's own build tools (pip)
    changed = sorted(p for p in before.keys() | after.keys() if before.get(p) != after.get(p)
                     and not p.startswith(tuple(tools)))
    assert not changed, changed
    assert attacked["status"][0] == attacked["status"][1], attacked["status"]
    assert not list(attacked["base"].rglob("PWNED*"))
    out = attacked["out"]
    assert {p.name for p in out.iterdir()} <= {"grades.csv", "feedback", "logs"}


def test_no_process_is_left_and_grades_csv_stays(attacked):
    assert (attacked["out"] / "grades.csv").read_bytes() == attacked["first"], "grades.csv changed after grading"
    assert not daemon_pids()
    first = attacked["uids"][0]
    left = [p for n in range(len(attacked["expected"]) + 1) for p in sandbox.processes_of(first + n)]
    assert not left


def test_feedback_pages_are_written_from_the_verdicts(attacked):
    page = (attacked["out"] / "feedback" / "evil_forged_output" / f"{AID}.html").read_text(encoding="utf-8")
    assert "✅" not in page and "Tổng điểm: <b>0 / 3</b>" in page
    page = (attacked["out"] / "feedback" / "honest_full" / f"{AID}.html").read_text(encoding="utf-8")
    assert "Tổng điểm: <b>3 / 3</b>" in page and "<math" in page and "$q" not in page    # the title's math rendered
    assert WARNING not in page and "ipykernel" not in page


# ------------------------------------------------------------------ the walls, one by one
_uids = None


def in_sandbox(code: str, *, uid: int = 900, limits: sandbox.Limits | None = None, read_only=()) -> subprocess.CompletedProcess:
    """``code`` run by this Python in a sandbox as submissions are (the venv read-only, nothing else),
    as uid ``uid`` of a block of uids leased for this module."""
    global _uids
    _need_sandbox()
    _uids = _uids or sandbox.lease_uids()
    limits = limits or sandbox.Limits(wall=60)
    cmd = sandbox.bwrap_command(_uids[0] + uid, [sys.prefix, sys.base_prefix, *read_only], [sys.executable, "-E", "-s", "-c", code],
                                {"PATH": "/usr/bin:/bin", "HOME": "/sandbox"})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=limits.wall,
                          preexec_fn=sandbox._limit(limits, True))


def test_the_sandbox_sees_only_what_it_is_given(tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("instructor")
    home = sorted(str(p) for p in Path.home().iterdir() if not str(sys.base_prefix).startswith(str(p)))[:1] \
        or [str(secret)]                              # something of the grader's home, if it has anything
    code = f"""
import os, socket
print(os.getuid(), os.getgid(), os.getgroups())
print(sorted(os.listdir("/")))
print(sorted(p for p in os.listdir("/proc") if p.isdigit()))
for path in ({str(secret)!r}, {str(ROOT / 'solutions')!r}, {home[0]!r}, "/etc/passwd", {str(ROOT / 'shared')!r}):
    print(path, os.path.exists(path))
for path in ({sys.prefix + '/pyvenv.cfg'!r}, "/usr/bin/env"):
    try:
        open(path, "a").close(); print("wrote", path)
    except OSError as e:
        print("refused", path, type(e).__name__)
s = socket.socket()
s.settimeout(2)
try:
    s.connect(("127.0.0.1", {_listener()})); print("network: connected")
except OSError as e:
    print("network:", type(e).__name__)
"""
    r = in_sandbox(code)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == f"{_uids[0] + 900} {_uids[0] + 900} []"
    assert Path(sys.prefix).parts[1] in eval(lines[1]), lines[1]      # the venv's folder (/work, /tmp, ...)
    assert "etc" not in lines[1] and "home" not in lines[1]
    assert len(eval(lines[2])) <= 3, lines[2]                        # bwrap's init, setpriv/python: no grader
    assert all(ln.endswith(" False") for ln in lines[3:8]), lines[3:8]
    assert all(ln.startswith("refused") for ln in lines[8:10]), lines[8:10]
    assert lines[10].startswith("network:") and "connected" not in lines[10]


_server = None


def _listener() -> int:
    """A port on this machine's 127.0.0.1 (listening for the whole module; nothing connects from the sandbox)."""
    global _server
    if _server is None:
        _server = socket.socket()
        _server.bind(("127.0.0.1", 0))
        _server.listen(1)
    return _server.getsockname()[1]


def test_every_process_dies_with_the_sandbox():
    code = f"""
import subprocess, sys
subprocess.Popen([sys.executable, "-c", "# {MARK}-orphan\\nimport time; time.sleep(120)"], start_new_session=True)
print("started")
"""
    r = in_sandbox(code, uid=901)
    assert r.returncode == 0 and "started" in r.stdout, r.stderr
    time.sleep(0.5)
    assert not sandbox.processes_of(_uids[0] + 901)


def test_limits_stop_a_submission():
    r = in_sandbox("x = bytearray(8 << 30)", limits=sandbox.Limits(wall=60, memory=2 << 30))
    assert r.returncode != 0 and "MemoryError" in r.stderr
    r = in_sandbox("open('/sandbox/big', 'wb').write(b'x' * (3 << 20))", limits=sandbox.Limits(wall=60, file_size=1 << 20))
    assert r.returncode != 0
    r = in_sandbox("while True: pass", limits=sandbox.Limits(wall=60, cpu=1))
    assert r.returncode != 0                         # SIGXCPU after one second of CPU
    code = "import os\nn = 0\ntry:\n    while n < 200:\n        if os.fork() == 0:\n            import time; time.sleep(5); os._exit(0)\n        n += 1\nexcept OSError as e:\n    print('stopped at', n, type(e).__name__)"
    r = in_sandbox(code, limits=sandbox.Limits(wall=60, tasks=20))
    assert "stopped at" in r.stdout, (r.stdout, r.stderr)


def test_grade_refuses_without_a_sandbox_unless_unsafe(tmp_path):
    (tmp_path / "subs").mkdir()
    env = {**os.environ, "PATH": os.path.dirname(sys.executable), "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)])}
    r = subprocess.run([sys.executable, "-m", "tools.assignments.grade", str(tmp_path / "subs"), "--out", str(tmp_path / "g")],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 3, r.stderr
    assert "bubblewrap" in r.stderr and "UNSAFE=1" in r.stderr and not (tmp_path / "g").exists()


def test_grading_again_merges_and_unsafe_is_written(tmp_path):
    """Two runs into one folder: the first run's rows stay; --unsafe is on every row it wrote; a notebook
    in the wrong folder gets a page that says where it goes; --force starts a new grades.csv."""
    from assignment_submissions import lesson01_references, put, with_answers
    _need_sandbox()
    out, home = tmp_path / "grades", tmp_path / "home"
    home.mkdir()
    put(tmp_path / "week1", "an", AID, with_answers(RELEASE, {}))
    assert grade(tmp_path / "week1", out, home).returncode == 0
    put(tmp_path / "week2", "binh", AID, with_answers(RELEASE, lesson01_references()))
    stray = tmp_path / "week2" / "loc.ho" / "01_self_attention" / "01_self_attention.ipynb"
    stray.parent.mkdir(parents=True)
    stray.write_bytes(RELEASE.read_bytes())
    r = grade(tmp_path / "week2", out, home, "--unsafe")
    assert r.returncode == 0 and "WITHOUT the sandbox" in r.stderr, r.stderr[-2000:]
    assert "kept 3 rows of earlier runs" in r.stdout and "(1 could not be graded" in r.stdout, r.stdout
    rows = read_rows(out)
    assert [rows[("an", e)]["points"] for e in ("l01.softmax", "l01.attention", "l01.dot_std")] == ["0.0"] * 3
    assert all("WITHOUT the sandbox" not in rows[("an", e)]["note"] for e in ("l01.softmax", "l01.dot_std"))
    assert [rows[("binh", e)]["points"] for e in ("l01.softmax", "l01.attention", "l01.dot_std")] == ["1.0"] * 3
    assert all("graded WITHOUT the sandbox" in rows[("binh", e)]["note"] for e in ("l01.softmax", "l01.dot_std"))
    want = "loc.ho/01_self_attention_vi/01_self_attention.ipynb"
    assert want in rows[("loc.ho", "")]["note"]
    page = (out / "feedback" / "loc.ho" / "01_self_attention.html").read_text(encoding="utf-8")
    assert 'lang="vi"' in page and want in page and "hãy đổi tên thư mục" in page
    (tmp_path / "week3" / "loc.ho").mkdir(parents=True)                 # only the stray notebook: no kernel runs
    (tmp_path / "week3" / "loc.ho" / "01_self_attention.ipynb").write_bytes(RELEASE.read_bytes())
    r = grade(tmp_path / "week3", out, home, "--unsafe", "--force")
    assert r.returncode == 0 and "kept" not in r.stdout, r.stdout
    assert set(read_rows(out)) == {("loc.ho", "")} and not (out / "feedback" / "an").exists()
