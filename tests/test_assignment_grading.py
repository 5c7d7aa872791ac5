"""The grader's pieces that need no kernel (tools/assignments: grade, runner, suspicious, report):
fast, in `make test-fast`. The sandboxed runs are in tests/test_assignment_sandbox.py."""
from __future__ import annotations

import io
from pathlib import Path

import nbformat
import pytest
import torch

from tools.assignments import report, runner, submissions, suspicious

ROOT = Path(__file__).resolve().parents[1]
AID = "01_self_attention_vi"
RELEASE = ROOT / "assignments" / "release" / AID / "01_self_attention.ipynb"
SOURCE = ROOT / "assignments" / "source" / AID / "01_self_attention.ipynb"


def released():
    return nbformat.read(RELEASE, as_version=4)


def by_id(nb) -> dict:
    return {c.metadata.get("nbgrader", {}).get("grade_id"): c for c in nb.cells if "nbgrader" in c.metadata}


def test_flipped_flags_and_deleted_cells_get_the_release_metadata_back():
    nb = released()
    cells = by_id(nb)
    cells["l01-softmax"].metadata["nbgrader"]["points"] = 10
    cells["l01-attention"].metadata["nbgrader"]["grade"] = False
    cells["l01-attention-answer"].metadata["nbgrader"].update(grade=True, points=5)
    cells["l01-softmax-answer"].metadata["nbgrader"]["grade_id"] = "made-up"
    nb.cells.remove(cells["l01-dot_std"])
    changed = submissions.restore_metadata(nb, released())
    assert changed == {"l01-softmax", "l01-attention", "l01-attention-answer", "made-up", "l01-dot_std"}
    fresh = by_id(released())
    now = by_id(nb)
    for gid in ("l01-softmax", "l01-attention", "l01-attention-answer", "l01-dot_std"):
        assert now[gid].metadata["nbgrader"] == fresh[gid].metadata["nbgrader"], gid
    order = [c.metadata.get("nbgrader", {}).get("grade_id") for c in nb.cells if "nbgrader" in c.metadata]
    assert order[-2:] == ["l01-dot_std-answer", "l01-dot_std"]           # back where it was
    assert "made-up" not in order


def test_the_kernel_runs_probes_on_the_seed_instead_of_the_checker_calls():
    nb = nbformat.read(SOURCE, as_version=4)                 # what nbgrader restores: the source's locked cells
    info = submissions.known_assignments(ROOT / "assignments")[AID]["graded"]
    assert info["l01-softmax"] == {"key": "l01.softmax", "args": "my_softmax", "max": 1.0}
    todo = runner.units(nb, info, {"l01.softmax", "l01.attention"}, "attnlab.exercises", 1234567, "/sandbox")
    codes = [u["code"] for u in todo]
    assert not any(".check_" in c or "HIDDEN" in c for u, c in zip(todo, codes) if u["kind"] != "in_kernel")
    probes = [u for u in todo if u["kind"] == "probe"]
    assert [u["key"] for u in probes] == ["l01.softmax", "l01.attention"]
    assert "probe(my_softmax, seed=1234567)" in probes[0]["code"] and "/sandbox/out/l01.softmax.pt" in probes[0]["code"]
    fallback = [u for u in todo if u["kind"] == "in_kernel"]   # no probe for it: its hidden test, in the kernel
    assert [u["grade_id"] for u in fallback] == ["l01-dot_std"] and "HIDDEN TESTS" in fallback[0]["code"]
    assert "1234567" not in nbformat.writes(nb)


def test_every_graded_exercise_is_judged_outside_the_kernel():
    """Every exercise of every committed assignment has a probe in the registry, so `make grade` judges
    it in its own process; none falls back to its hidden test in the student's kernel (the row note
    'verdict decided in the student's kernel', docs/grading.md)."""
    ids = submissions.known_assignments(ROOT / "assignments")
    probes = runner.Registry("attnlab.exercises").probes
    exercises = [(aid, ex["grade_id"]) for aid, v in ids.items() for ex in v["exercises"]]
    assert len(ids) >= 20 and len(exercises) >= 60, (len(ids), len(exercises))
    no_call = [(aid, gid) for aid, gid in exercises if gid not in ids[aid]["graded"]]
    in_kernel = [(aid, gid, g["key"]) for aid, v in ids.items() for gid, g in v["graded"].items() if g["key"] not in probes]
    assert not no_call and not in_kernel, (no_call, in_kernel)


def test_results_are_read_safely():
    from attnlab.exercises import _common
    reg = runner.Registry("attnlab.exercises")
    good = io.BytesIO()
    torch.save({"case0": {"value": torch.ones(2)}}, good)
    import base64
    blob = lambda b: {"data": base64.b64encode(b).decode()}   # noqa: E731
    assert set(reg.load(blob(good.getvalue()))) == {"case0"}

    class Evil:
        def __reduce__(self):
            return (print, ("pwned",))
    bad = io.BytesIO()
    torch.save({"x": Evil()}, bad)
    assert reg.load(blob(bad.getvalue())) is None              # a pickled object: refused, not run
    assert reg.load(blob(b"\x00" * 100)) is None and reg.load({"data": "not base64!"}) is None
    assert reg.load({"too_big": 10 ** 9}) is None
    fb = reg.verdict("l01.softmax", runner.error_data({"status": "error", "error": {"ename": "NameError",
                                                       "evalue": "name 'my_softmax' is not defined"}}), 1, "vi")
    assert fb.ok is False and "my_softmax" in fb.text
    assert _common.load_results is not None


def test_suspicious_code_is_named_and_honest_code_is_not():
    from assignment_attacks import ATTACKS, _answers
    from assignment_submissions import lesson01_references, with_answers
    refs = lesson01_references()
    assert suspicious.findings(with_answers(RELEASE, refs)) == []
    for student, (code, rest) in ATTACKS.items():
        if code:
            assert suspicious.findings(with_answers(RELEASE, _answers(code, rest, refs))), student
    found = suspicious.findings(with_answers(RELEASE, {"l01-softmax": "import torch\ntorch.allclose = lambda *a: True"}))
    assert found == ["patches torch.allclose (cell 6)"], found


def test_stored_outputs_that_claim_correct_are_found():
    nb = released()
    by_id(nb)["l01-softmax"].outputs = [nbformat.v4.new_output("stream", name="stdout", text="✅ Đúng rồi!\n")]
    assert suspicious.claims(nb, {"l01-softmax", "l01-attention"}) == {"l01-softmax"}


def test_feedback_pages_render_math_and_escape_the_rest():
    html = report.with_math("Bài tập 3 — Dự đoán độ lệch chuẩn của $q \\cdot k$ <b>")
    assert "<math" in html and "$" not in html and "&lt;b&gt;" in html
    row = {"exercise": "l01.dot_std", "title": "Bài tập 3 — $q \\cdot k$", "points": 0.0, "max_points": 1.0,
           "feedback": "<script>", "notes": [("suspicious", {"what": "x"}), ("timeout", {"seconds": 60})]}
    page = report.feedback_page("an", "Bài 1", "zh", [row])
    assert "<script>" not in page and "60 秒内没有结果" in page and "may tamper" not in page
    assert "自动评分结果：" in page and "学生：" in page
    page = report.layout_page("an", None, [("layout", {"found": "an/x.ipynb", "want": "an/01_self_attention_vi/y.ipynb",
                                                        "assignment": ""})])
    assert "hãy đổi tên thư mục" in page and "请照此重命名文件夹" in page


@pytest.mark.parametrize("key", sorted(report.WORDS))
def test_every_note_the_student_reads_is_in_both_languages(key):
    if key in report.INSTRUCTOR_ONLY:
        assert set(report.WORDS[key]) == {"en"}
    else:
        assert {"en", "vi", "zh"} <= set(report.WORDS[key]), key


def test_the_other_languages_notebook_is_no_tampering():
    ids = submissions.known_assignments(ROOT / "assignments")
    zh = ROOT / "assignments" / "release" / "01_self_attention_zh" / "01_self_attention.ipynb"
    problem, edited, note = submissions.check_submission(zh, AID, ids)
    assert problem is None and edited == set() and note == ("other_language", {"other": "01_self_attention_zh", "aid": AID})
    problem, edited, note = submissions.check_submission(RELEASE, AID, ids)
    assert (problem, edited, note) == (None, set(), None)


def test_a_utf8_bom_is_no_reason_to_fail(tmp_path):
    """Windows editors save a BOM; the trial's w.bom got 0 points for it."""
    ids = submissions.known_assignments(ROOT / "assignments")
    path = tmp_path / "01_self_attention.ipynb"
    path.write_bytes(b"\xef\xbb\xbf" + RELEASE.read_bytes())
    assert submissions.check_submission(path, AID, ids) == (None, set(), None)
    path.write_bytes(b"{ broken")
    problem, _, _ = submissions.check_submission(path, AID, ids)
    assert problem[0] == "invalid"


def test_two_grading_runs_never_share_a_sandbox_uid():
    """Each run leases a block of uids: one run's leftover-process check can never kill the other's sandboxes."""
    from tools.assignments import sandbox
    (a, lock_a), (b, lock_b) = sandbox.lease_uids(), sandbox.lease_uids()
    assert a != b and abs(a - b) >= sandbox.UID_BLOCK and min(a, b) >= sandbox.UID_BASE
    lock_a.close()
    lock_b.close()


def test_a_cell_cut_off_mid_statement_is_a_syntax_error_on_every_python():
    """Python 3.13's kernel names it _IncompleteInputError (a private subclass of SyntaxError): the
    student's note and the checker's judge both read SyntaxError, as on 3.9-3.12."""
    from tools.assignments import grade
    cut_off = {"status": "error", "error": {"ename": "_IncompleteInputError",
                                            "evalue": "incomplete input (3666543787.py, line 2)"}}
    unit = {"id": "u1", "grade_id": "l01-softmax", "kind": "answer"}
    (key, fields), = grade._unit_notes("l01-softmax", [unit], {"u1": cut_off}, 40)
    assert key == "error" and fields["error"].startswith("SyntaxError: incomplete input"), fields
    assert runner.error_data(cut_off)["error"]["type"] == "SyntaxError"
    assert runner.error_data({"status": "error", "error": {"ename": "NameError"}})["error"]["type"] == "NameError"
