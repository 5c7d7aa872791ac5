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
    (lambda q, kc, vc, kn, vn: (_attend(q, kc, vc), _cat(kc, kn), _cat(vc, vn)), "l08.hint.cache_no_append"),
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
    assert l08._diagnose_cache_step(solutions.attend_step, model) == (True, "l08.ok.cache", {"count": 8})
    line = t("ex.correct", "en", detail=t("l08.ok.cache", "en", count=8))
    assert verdict(l08.check_cache_step, solutions.attend_step, model) == (True, line)
    assert l08.check_cache_step(solutions.attend_step, model) is None
    assert capsys.readouterr().out == line + "\n"


def test_cache_step_accepts_the_package_step(model):
    assert verdict(l08.check_cache_step, lambda *a: (lambda o, w, k, v: (o, k, v))(*tr.attend_step(*a)), model)[0] is True


@pytest.mark.parametrize("fn, key", CACHE_MISTAKES, ids=[f"{i}-{k.split('.')[-1]}" for i, (_, k) in enumerate(CACHE_MISTAKES)])
def test_cache_step_rejects_mistake(model, fn, key, capsys):
    assert_hint(lambda: l08.check_cache_step(fn, model), lambda: l08._diagnose_cache_step(fn, model), key, capsys)


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
    ok, key, fields = l08._diagnose_aligned_head(model, best)
    assert (ok, key) == (True, "l08.ok.head")
    mass = tr.alignment_mass(model)
    weak = divmod(int(mass.argmin()), mass.shape[1])
    weak = (weak[0] + 1, weak[1] + 1)
    assert_hint(lambda: l08.check_aligned_head(model, weak), lambda: l08._diagnose_aligned_head(model, weak),
                "l08.hint.head_weak", capsys)
    for answer, key in [((0, 1), "l08.hint.head_zero"), ((3, 1), "l08.hint.head_range"), ((1, 5), "l08.hint.head_range"),
                        ("2, 1", "l08.hint.head_format"), ((1.0, 2), "l08.hint.head_format"), ((2,), "l08.hint.head_format")]:
        assert_hint(lambda: l08.check_aligned_head(model, answer), lambda: l08._diagnose_aligned_head(model, answer),
                    key, capsys)
    assert verdict(l08.check_aligned_head, model, best)[0] is True
    assert verdict(l08.check_aligned_head, model, None)[0] is None


# ---------------------------------------------------------------------------------- seven digits
def test_seven_digits(model, capsys):
    ok, key, fields = l08._diagnose_seven_digits(model, solutions.SEVEN_DIGITS)
    assert (ok, key) == (True, "l08.ok.seven")                        # vi: no word for millions
    assert fields["missing"] == "triệu" and (fields["n_words"], fields["max_new"]) == (13, model.config.max_tgt - 1)
    assert fields["words"] == " ".join(l08.seven_digit_words(model)) and fields["words"]
    for answer, key in [("A", "l08.hint.seven_right_vocab"), ("c", "l08.hint.seven_error"), ("D", "l08.hint.seven_format"),
                        (2, "l08.hint.seven_format")]:
        assert_hint(lambda: l08.check_seven_digits(model, answer), lambda: l08._diagnose_seven_digits(model, answer),
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
    ok, key, fields = l08._diagnose_seven_digits(zh, "A")
    assert (ok, key, fields["missing"]) == (False, "l08.hint.seven_right", "")
    assert l08._diagnose_seven_digits(zh, "B")[1] == "l08.ok.seven_length"
