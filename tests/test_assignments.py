"""The exercises as nbgrader assignments, end to end (issue 23, docs/grading.md).

One build of the assignments (compared with the committed ones) and ONE grading run of a whole
class (two workers): for every lesson in the wrong-solution catalogue and both languages, a
reference submission, an untouched one, and a wrong one carrying the first wrong entry of every
exercise (ATTNLAB_ALL_WRONG=1: submission i carrying wrong entry i, all of them);
plus lesson 01 handed in badly in every way the issue lists, and a tampered submission.
Since issue 31 each submission runs in the grading sandbox (or --unsafe where there is none).
"""
from __future__ import annotations

import csv
import html
import os
import re
import string
import subprocess
import sys
from pathlib import Path

import nbformat
import pytest

from attnlab.course.i18n import CATALOG

from assignment_submissions import bad_submissions, class_from_catalogue, evaluate_paths, load_catalogue
from tools.assignments import sandbox
from tools.assignments.report import WORDS

pytest.importorskip("nbgrader", reason="nbgrader (requirements-dev.txt) needs Python 3.11 or newer")
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "assignments"
TIMEOUT = 20            # seconds per cell in the test run (the infinite loop costs this much; the slowest
                        # whole honest submission took 4.5 s on a quiet 2-core machine, 2 Dec 2026)
GRADE_TIMEOUT = 2400    # the whole class, lessons 01-10 (about 70 notebooks): a safety limit, not a timing
# Wrong submissions per assignment: the first carries the first wrong solution of every exercise. Every
# wrong solution's verdict and hint is tested by tests/test_catalogue.py (in process, several seeds);
# here the grader's whole path (the assignment, the sandbox, the judge, the page) for each lesson and
# language. All of them (over 300 notebooks, 40 min on the shared machine): ATTNLAB_ALL_WRONG=1.
WRONG_SUBMISSIONS = None if os.environ.get("ATTNLAB_ALL_WRONG") else 1
# Notes for the instructor that say how a row was graded, not that something went wrong with it.
HOW = (WORDS["in_kernel"]["en"], WORDS["unsafe"]["en"])


def run(*args, timeout=900):
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "shared"), str(ROOT)]), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=timeout)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("built")
    r = run("tools.assignments.build", "--out", str(out))
    assert r.returncode == 0, r.stderr[-3000:]
    return out


@pytest.fixture(scope="module")
def catalogue():
    return load_catalogue()


@pytest.fixture(scope="module")
def graded(built, catalogue, tmp_path_factory):
    """Grade the whole class once: (rows by (student, assignment, grade_id), feedback folder, expectations)."""
    subs = tmp_path_factory.mktemp("submitted")
    expected, missing = class_from_catalogue(subs, built, catalogue, WRONG_SUBMISSIONS) if catalogue else ({}, [])
    bad = bad_submissions(subs, built)
    out = tmp_path_factory.mktemp("grades")
    unsafe = ["--unsafe"] if sandbox.why_not() else []     # the catalogue's grades; the sandbox: test_assignment_sandbox.py
    r = run("tools.assignments.grade", str(subs), "--out", str(out), "--assignments", str(built),
            "-j", "2", "--timeout", str(TIMEOUT), *unsafe, timeout=GRADE_TIMEOUT)
    assert r.returncode == 0, r.stderr[-3000:]
    with open(out / "grades.csv", encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    by_key = {(r["student"], f"{r['lesson']}_{r['language']}", r["exercise"].replace(".", "-")): r for r in rows}
    return by_key, out / "feedback", expected, bad, missing


def feedback_row(feedback: Path, student: str, aid: str, grade_id: str) -> str:
    page = (feedback / student / f"{aid}.html").read_text(encoding="utf-8")
    m = re.search(rf"<tr data-exercise='{re.escape(grade_id.replace('-', '.'))}'>(.*?)</tr>", page, re.S)
    assert m, f"no row for {grade_id} in {student}'s feedback on {aid}"
    return html.unescape(re.sub(r"<[^>]+>", " ", m.group(1)))


def hint_fragment(key: str, lang: str) -> str:
    """The longest literal part of a message (its fields depend on the input)."""
    parts = [lit for lit, *_ in string.Formatter().parse(CATALOG[key][lang])]
    return max((p.strip() for p in parts), key=len)


# ------------------------------------------------------------------ building
def test_committed_assignments_are_a_fresh_build(built):
    """Built from the lessons, never by hand: a lesson change without `make assignments` fails here."""
    def files(root):
        return {p.relative_to(root): p.read_bytes() for p in root.rglob("*.ipynb")}
    fresh, committed = files(built), files(COMMITTED)
    assert sorted(map(str, fresh)) == sorted(map(str, committed)), "run `make assignments`"
    stale = [str(p) for p in fresh if fresh[p] != committed[p]]
    assert not stale, f"assignments out of date (run `make assignments`): {stale}"


def test_every_lesson_with_exercises_has_both_languages(built):
    lessons = {p.stem for p in (ROOT / "lessons_vi").glob("*.ipynb") if ".check_" in p.read_text(encoding="utf-8")}
    assert {p.name for p in (built / "release").iterdir()} == {f"{s}_{l}" for s in lessons for l in ("vi", "zh")}


def test_students_cannot_see_the_hidden_tests(built):
    for release in (built / "release").glob("*/*.ipynb"):
        source = nbformat.read(built / "source" / release.parent.name / release.name, as_version=4)
        student = nbformat.read(release, as_version=4)
        graded = [c for c in source.cells if c.metadata.get("nbgrader", {}).get("grade")]
        assert graded and all("### BEGIN HIDDEN TESTS" in c.source for c in graded)
        text = release.read_text(encoding="utf-8")
        assert "HIDDEN TESTS" not in text and "evaluate_" not in text, release
        released = {c.metadata["nbgrader"]["grade_id"]: c for c in student.cells if "nbgrader" in c.metadata}
        for cell in graded:            # the student sees the lesson's checker call, locked
            shown = released[cell.metadata["nbgrader"]["grade_id"]]
            assert shown.source == cell.source.split("\n### BEGIN HIDDEN TESTS")[0]
            assert ".check_" in shown.source and shown.metadata["nbgrader"]["locked"]


def test_vi_and_zh_assignments_have_the_same_code(built):
    """The lessons' rule (tests/test_notebooks.py): the same program, only the words of the strings differ."""
    from test_notebooks import normalized_code
    for vi in (built / "source").glob("*_vi/*.ipynb"):
        zh = built / "source" / vi.parent.name.replace("_vi", "_zh") / vi.name
        code = [[normalized_code(c) for c in nbformat.read(p, as_version=4).cells if c.cell_type == "code"]
                for p in (vi, zh)]
        assert code[0] == code[1], vi.name


def test_catalogue_exercises_are_all_in_the_assignments(built, catalogue):
    if not catalogue:
        pytest.skip("solutions/catalogue.py is not in this checkout (another issue's file)")
    for entry in catalogue:
        for aid in (f"{entry['lesson']}_vi", f"{entry['lesson']}_zh"):
            source = nbformat.read(built / "source" / aid / f"{entry['lesson']}.ipynb", as_version=4)
            assert entry["evaluate"] in evaluate_paths(source), (entry["key"], aid)


def test_hub_config_puts_the_venv_on_path():
    """nbgrader runs `alembic` as a command: started as .venv/bin/nbgrader, without an activated venv."""
    code = ("import os\nfrom traitlets.config.loader import PyFileConfigLoader\n"
            f"PyFileConfigLoader('nbgrader_config.py', path={str(ROOT / 'hub')!r}).load_config()\nprint(os.environ['PATH'])")
    r = subprocess.run([sys.executable, "-c", code], env={**os.environ, "PATH": "/usr/bin:/bin"}, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(os.pathsep)[0] == os.path.dirname(sys.executable)


def test_hub_config_repeats_the_grading_settings(tmp_path):
    from traitlets.config.loader import PyFileConfigLoader
    from tools.assignments import settings
    hub = PyFileConfigLoader("nbgrader_config.py", path=str(ROOT / "hub")).load_config()
    ours = settings.config(tmp_path)
    for section, key in (("CourseDirectory", "course_id"), ("GenerateAssignment", "preprocessors"),
                         ("Execute", "timeout"), ("OverwriteCells", "add_missing_cells"),
                         ("Autograde", "create_student")):
        assert hub[section][key] == ours[section][key], (section, key)
    assert hub.Exchange.root


# ------------------------------------------------------------------ grading
def test_catalogue_grades(graded):
    """Reference: full marks; untouched: 0; wrong entry: 0 for its exercise, its hint in the feedback.
    Every mismatch of the class is listed (one grading run shows them all)."""
    rows, feedback, expected, _, _ = graded
    if not expected:
        pytest.skip("solutions/catalogue.py is not in this checkout (another issue's file)")
    wrong = []
    for (student, aid), want in expected.items():
        lang = aid.rpartition("_")[2]
        for gid, (points, hint) in want.items():
            row = rows[(student, aid, gid)]
            if float(row["points"]) != points or float(row["max_points"]) != 1.0:
                wrong.append((student, aid, gid, f"{row['points']}/{row['max_points']}, want {points}", row["note"],
                              feedback_row(feedback, student, aid, gid)))
            elif points and [n for n in row["note"].split("; ") if n and n not in HOW]:   # nothing went wrong
                wrong.append((student, aid, gid, "note", row["note"]))
            elif hint and hint_fragment(hint, lang) not in feedback_row(feedback, student, aid, gid):
                wrong.append((student, aid, gid, f"want {hint}", feedback_row(feedback, student, aid, gid)))
    assert not wrong, "\n".join(map(repr, wrong))


def test_every_graded_exercise_has_a_catalogue_entry(graded):
    """The exercises without an entry were graded as released (0 points, checked above); name them."""
    *_, expected, _, missing = graded
    if not expected:
        pytest.skip("solutions/catalogue.py is not in this checkout (another issue's file)")
    assert not missing, "graded exercises with no entry in solutions/catalogue*.py: " + ", ".join(missing)


def test_bad_submissions_are_graded_or_explained(graded):
    rows, feedback, _, bad, _ = graded
    aid = "01_self_attention_vi"
    for student, want in bad.items():
        for gid, (points, note) in want.items():
            row = rows[(student, aid, gid)]
            assert float(row["points"]) == points, (student, gid, row)
            assert float(row["max_points"]) == 1.0, (student, gid, row)
            assert note in row["note"], (student, gid, row["note"])
        assert (feedback / student / f"{aid}.html").is_file()
    stray = rows[("stray_student", "-_", "")]
    assert "it must be at stray_student/01_self_attention_vi/01_self_attention.ipynb" in stray["note"], stray
    assert stray["points"] == "0.0"
    page = (feedback / "stray_student" / "01_self_attention.html").read_text(encoding="utf-8")
    assert 'lang="vi"' in page and "stray_student/01_self_attention_vi/01_self_attention.ipynb" in page


def test_feedback_is_in_the_students_language(graded):
    rows, feedback, _, _, _ = graded
    vi = (feedback / "tampered" / "01_self_attention_vi.html").read_text(encoding="utf-8")
    assert 'lang="vi"' in vi and "Tổng điểm" in vi and "ô gốc đã được đặt lại" in vi
    text = feedback_row(feedback, "syntax_error", "01_self_attention_vi", "l01-attention")
    assert "Đúng rồi" in text, text


def test_grade_refuses_a_missing_folder(tmp_path):
    r = run("tools.assignments.grade", str(tmp_path / "nothing"), "--out", str(tmp_path / "g"), timeout=120)
    assert r.returncode == 2 and "is not a folder of submissions" in r.stderr
