"""Lesson 08 checkers: each accepts the reference solution, rejects each typical mistake with its
own hint, and reports 'not done' for the untouched TODO."""
from __future__ import annotations

import math

import pytest
import torch

from attnlab import translator as tr
from attnlab.exercises import l08
from attnlab.course.i18n import t

from solutions import l08 as solutions


@pytest.fixture(scope="module")
def model():
    return tr.load_pretrained("vi")


def _diagnose(exercise, *args, seed=0):
    return exercise.judge(exercise.probe(*args, seed=seed), seed=seed)


def diagnose_cache_step(fn, model, seed=0):
    return _diagnose(l08.CACHE_STEP, fn, model, seed=seed)


def diagnose_aligned_head(model, answer, seed=0):
    return _diagnose(l08.ALIGNED_HEAD, model, answer, seed=seed)


def diagnose_seven_digits(model, answer, seed=0):
    return _diagnose(l08.SEVEN_DIGITS, model, answer, seed=seed)


def todo(*args):
    # TODO: the untouched exercise
    return None


def assert_hint(check, diagnose, key, capsys):
    """``diagnose()`` picks the hint ``key``; ``check()`` prints exactly that hint and returns None;
    its ``evaluate`` twin says wrong with the same line."""
    ok, got_key, fields = diagnose()
    assert (ok, got_key) == (False, key)
    line = t("ex.wrong", "en", detail=t(key, "en", **fields))
    assert check() is None
    assert capsys.readouterr().out == line + "\n"


def verdict(check, *args):
    """What ``check(*args)`` tells the student, as (ok, text), without printing."""
    feedback = check.evaluate(*args)
    return feedback.ok, feedback.text


# ---------------------------------------------------------------------------------- cache step
def _attend(q, k, v, scale=None):
    scale = 1 / math.sqrt(q.shape[-1]) if scale is None else scale
    return torch.softmax(q @ k.transpose(-2, -1) * scale, dim=-1) @ v


def _cat(c, n, dim=2):
    return n if c is None else torch.cat([c, n], dim=dim)


CACHE_MISTAKES = [
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn)), kc, vc), "l08.hint.cache_no_append"),
    # attends to the old cache, then appends (engineering review W2: the cache WAS appended to)
    (lambda q, kc, vc, kn, vn: (_attend(q, kc, vc), _cat(kc, kn), _cat(vc, vn)), "l08.hint.cache_attend_old"),
    (lambda q, kc, vc, kn, vn: (_attend(q, kn, vn), _cat(kc, kn), _cat(vc, vn)), "l08.hint.cache_ignored"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn), 1.0), _cat(kc, kn), _cat(vc, vn)),
     "l08.hint.cache_scale"),
    (lambda q, kc, vc, kn, vn: (torch.softmax(q @ _cat(kc, kn).transpose(-2, -1) / math.sqrt(q.shape[-1]), -1),
                                _cat(kc, kn), _cat(vc, vn)), "l08.hint.cache_weights"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn)), _cat(kc, kn, 3), _cat(vc, vn, 3)),
     "l08.hint.cache_dim"),
    (lambda q, kc, vc, kn, vn: (_attend(q, torch.cat([kc, kn], 2), torch.cat([vc, vn], 2)),
                                torch.cat([kc, kn], 2), torch.cat([vc, vn], 2)), "l08.hint.cache_first"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(kc, kn)), _cat(kc, kn), _cat(vc, vn)),
     "l08.hint.cache_values"),                                                       # keys used as values
    (lambda q, kc, vc, kn, vn: [_attend(q, _cat(kc, kn), _cat(vc, vn))], "l08.hint.cache_return_count"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn)), _cat(kc, kn)), "l08.hint.cache_return_count"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn)), _cat(kc, kn).numpy(), _cat(vc, vn)),
     "l08.hint.cache_return"),
    # the new key in front: attention without a mask does not see it, the cache does
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kn, kc), _cat(vn, vc)), _cat(kn, kc), _cat(vn, vc)),
     "l08.hint.cache_order"),
    (lambda q, kc, vc, kn, vn: (_attend(q, _cat(kc, kn), _cat(vc, vn)), _cat(kc, kn), _cat(vc, vn).flip(2)),
     "l08.hint.cache_kv"),
]


def test_cache_step_accepts_solution(model, capsys):
    assert diagnose_cache_step(solutions.attend_step, model) == (True, "l08.ok.cache", {"count": 8})
    line = t("ex.correct", "en", detail=t("l08.ok.cache", "en", count=8))
    assert verdict(l08.check_cache_step, solutions.attend_step, model) == (True, line)
    assert l08.check_cache_step(solutions.attend_step, model) is None
    assert capsys.readouterr().out == line + "\n"


def test_cache_step_accepts_the_package_step(model):
    assert verdict(l08.check_cache_step, lambda *a: (lambda o, w, k, v: (o, k, v))(*tr.attend_step(*a)), model)[0] is True


@pytest.mark.parametrize("fn, key", CACHE_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in enumerate(CACHE_MISTAKES)])
def test_cache_step_rejects_mistake(model, fn, key, capsys):
    assert_hint(lambda: l08.check_cache_step(fn, model, seed=0), lambda: diagnose_cache_step(fn, model), key, capsys)


def test_cache_step_not_done(model, capsys):
    assert verdict(l08.check_cache_step, todo, model) == (None, t("ex.not_done", "en", name=t("l08.ex.cache", "en")))
    assert l08.check_cache_step(todo, model) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l08.ex.cache", "en")) + "\n"


def test_cache_step_reports_an_error(model):
    ok, text = verdict(l08.check_cache_step, lambda *a: 1 / 0, model)
    assert ok is False and "ZeroDivisionError" in text


# ---------------------------------------------------------------------------------- aligned head
def test_aligned_head(model, capsys):
    best = solutions.aligned_head(model)
    ok, key, fields = diagnose_aligned_head(model, best)
    assert (ok, key) == (True, "l08.ok.head")
    mass = tr.alignment_mass(model)
    weak = divmod(int(mass.argmin()), mass.shape[1])
    weak = (weak[0] + 1, weak[1] + 1)
    assert_hint(lambda: l08.check_aligned_head(model, weak, seed=0), lambda: diagnose_aligned_head(model, weak),
                "l08.hint.head_weak", capsys)
    for answer, key in [((0, 1), "l08.hint.head_zero"), ((3, 1), "l08.hint.head_range"), ((1, 5), "l08.hint.head_range"),
                        ("2, 1", "l08.hint.head_format"), ((1.0, 2), "l08.hint.head_format"), ((2,), "l08.hint.head_format")]:
        assert_hint(lambda: l08.check_aligned_head(model, answer), lambda: diagnose_aligned_head(model, answer),
                    key, capsys)
    assert verdict(l08.check_aligned_head, model, best)[0] is True
    assert verdict(l08.check_aligned_head, model, None)[0] is None


# ---------------------------------------------------------------------------------- seven digits
def test_seven_digits(model, capsys):
    ok, key, fields = diagnose_seven_digits(model, solutions.SEVEN_DIGITS)
    assert (ok, key) == (True, "l08.ok.seven")                        # vi: no word for millions
    assert fields["missing"] == "triệu" and (fields["n_words"], fields["max_new"]) == (13, model.config.max_tgt - 1)
    assert fields["words"] == " ".join(l08.seven_digit_words(model)) and fields["words"]
    for answer, key in [("A", "l08.hint.seven_right_vocab"), ("c", "l08.hint.seven_error"), ("D", "l08.hint.seven_format"),
                        (2, "l08.hint.seven_format")]:
        assert_hint(lambda: l08.check_seven_digits(model, answer), lambda: diagnose_seven_digits(model, answer),
                    key, capsys)
    assert verdict(l08.check_seven_digits, model, "b")[0] is True
    assert verdict(l08.check_seven_digits, model, None)[0] is None


def test_seven_digits_is_really_wrong():
    from attnlab.translator import numwords
    for lang in ("vi", "zh"):
        m = tr.load_pretrained(lang)
        assert l08.seven_digit_words(m) != ["một", "triệu"] and len(l08.seven_digit_words(m)) <= 10
        assert "triệu" not in numwords.VOCAB["vi"]


def test_seven_digits_blames_the_real_limit_in_chinese():
    """The Chinese vocabulary has every character of the right answer: the hint names the length and
    the unseen positions, never the vocabulary."""
    zh = tr.load_pretrained("zh")
    ok, key, fields = diagnose_seven_digits(zh, "A")
    assert (ok, key, fields["missing"]) == (False, "l08.hint.seven_right", "")
    assert diagnose_seven_digits(zh, "B")[1] == "l08.ok.seven_length"


# ---------------------------------------------------------------------------------- review 2026-12-01b
def test_aligned_head_is_graded_on_the_figure_the_student_reads(model, monkeypatch):
    """Teacher review (vi) L08 c25: the student reads the figure of one number (the lesson's
    example, 1.021) and must not be graded on 1.000 numbers they cannot see. The verdict stays the
    same whatever the held-out measure says."""
    best = l08.figure_heads(model)[0]                                     # the heads that align on the figure
    monkeypatch.setattr(tr, "alignment_mass", lambda m, numbers=None: torch.zeros(2, 4))
    assert verdict(l08.check_aligned_head, model, best)[0] is True


def test_the_graded_figure_is_the_lessons_figure():
    """The checker grades the figure of the lesson's example (the number the notebooks draw)."""
    import json
    import re
    from pathlib import Path
    root = Path(__file__).resolve().parents[1]
    for lang in ("vi", "zh"):
        cells = json.loads((root / f"lessons_{lang}" / "08_number_translator.ipynb").read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "code")
        assert re.search(rf"^example = {l08.FIGURE_NUMBER}\b", code, re.M), lang
        assert "after = tr.attention_maps(model, example)" in code


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_aligned_heads_are_the_ones_the_figure_shows(lang):
    """On the shipped models the heads accepted are those whose brightest cell sits on the aligned digit
    in most rows of the figure; a head right in only a few rows is refused with a row it misses."""
    m = tr.load_pretrained(lang)
    heads = l08.figure(m)
    accepted = set(l08.figure_heads(m))
    assert accepted and len(accepted) <= 3
    for h in heads:
        assert ((h.layer, h.head) in accepted) == (h.hits >= 0.75 * h.rows)
        ok, key, fields = diagnose_aligned_head(m, (h.layer, h.head))
        if (h.layer, h.head) in accepted:
            assert (ok, key) == (True, "l08.ok.head")
        elif key == "l08.hint.head_weak":
            assert fields["hits"] == h.hits and fields["word"] == h.miss[0]
        else:                                        # counted from 0: (l + 1, h + 1) is accepted
            assert key == "l08.hint.head_zero" and (h.layer + 1, h.head + 1) in accepted


def test_results_with_the_model_travel_to_another_process_and_the_grader_can_swap_the_model(model, tmp_path):
    """The grader's way: the probe's results (the lesson model included) are saved, loaded in a clean
    process and judged; ``results["model"]`` replaced by the package checkpoint gives the same verdicts."""
    import subprocess
    import sys
    from attnlab.exercises import EXERCISES, _models, load_results, save_results
    cases = [("l08.cache_step", (solutions.attend_step, model)), ("l08.aligned_head", (model, l08.figure_heads(model)[0])),
             ("l08.aligned_head", (model, (1, 1))), ("l08.seven_digits", (model, "A"))]
    for i, (key, args) in enumerate(cases):
        results = EXERCISES[key].probe(*args, seed=4)
        results["model"] = _models.checkpoint_data("08", "vi")
        save_results(tmp_path / f"r{i}.pt", results)
        assert EXERCISES[key].judge(load_results(tmp_path / f"r{i}.pt"), seed=4) == EXERCISES[key].judge(results, seed=4)
    code = ("import sys; from attnlab.exercises import EXERCISES, load_results\n"
            "for i, key in enumerate(sys.argv[2:]):\n"
            "    print(EXERCISES[key].judge(load_results(f'{sys.argv[1]}/r{i}.pt'), seed=4)[:2])\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path), *(k for k, _ in cases)], capture_output=True,
                         text=True, timeout=300, check=True).stdout.splitlines()
    assert out == ["(True, 'l08.ok.cache')", "(True, 'l08.ok.head')", "(False, 'l08.hint.head_zero')",
                   "(False, 'l08.hint.seven_right_vocab')"]


def test_a_hostile_model_in_the_results_is_no_result(model):
    from attnlab.exercises import EXERCISES
    results = EXERCISES["l08.aligned_head"].probe(model, (2, 2), seed=0)
    for bad in (None, {}, {"config": {"lang": "vi"}}, {**results["model"], "state_dict": {}},
                {**results["model"], "state_dict": {k: v * float("nan") for k, v in results["model"]["state_dict"].items()}},
                {**results["model"], "config": {**results["model"]["config"], "d_model": 10 ** 6}}):
        assert EXERCISES["l08.aligned_head"].judge({**results, "model": bad}, seed=0)[:2] == (False, "ex.no_result")
