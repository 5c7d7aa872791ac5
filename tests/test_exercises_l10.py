"""Lesson 10 checkers: each accepts the reference solution, rejects each typical mistake with its
own hint, reports 'not done' for the untouched TODO, and prints in every language."""
from __future__ import annotations

import pytest
import torch

from attnlab import poet
from attnlab.exercises import l10
from attnlab.course.i18n import t
from exercise_checks import graded, todo

from solutions import l10 as solutions


@pytest.fixture(scope="module", params=["vi", "zh"])
def lang_model(request):
    return request.param, poet.load_pretrained(request.param)


def test_probs_accepts_the_solution_and_the_package(capsys):
    assert l10._diagnose_probs(solutions.probs) == (True, "l10.ok.probs", {})
    assert graded(l10.check_probs, solutions.probs) is True
    assert capsys.readouterr().out == t("ex.correct", "en", detail=t("l10.ok.probs", "en")) + "\n"
    assert graded(l10.check_probs, lambda lg, T, k: poet.sample.next_token_probs(lg, T, k)) is True
    # a correct variant: top-k on the logits with -inf, then the softmax
    def on_logits(lg, T, k):
        z = lg / T
        if k is not None:
            z = torch.where(z >= z.topk(k).values[-1], z, -torch.inf)
        return torch.softmax(z, -1)
    assert graded(l10.check_probs, on_logits) is True


def test_probs_not_done_and_errors(capsys):
    assert graded(l10.check_probs, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name="my_probs") + "\n"
    assert graded(l10.check_probs, lambda lg, T, k: lg.nonexistent) is False
    assert capsys.readouterr().out.startswith("❌ Your code raised AttributeError")


def test_probs_shape_hint():
    ok, key, fields = l10._diagnose_probs(lambda lg, T, k: torch.softmax(lg / T, -1)[None])
    assert (ok, key) == (False, "l10.hint.probs_shape")


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_units_accepts_the_solution(lang, capsys):
    assert l10._diagnose_units(solutions.units, lang) == (True, "l10.ok.units", {})
    assert graded(l10.check_units, solutions.units, lang) is True
    assert graded(l10.check_units, poet.verse.units, lang) is True
    assert graded(l10.check_units, todo, lang) is None


def test_units_other_mistakes():
    ok, key, fields = l10._diagnose_units(lambda line, lang: solutions.units(line, lang)[:-1], "vi")
    assert key == "l10.hint.units_values" and fields["got"] == fields["expected"] - 1
    assert l10._diagnose_units(lambda line, lang: "x", "vi")[1] == "l10.hint.units_type"


def test_head_accepts_the_computed_answer(lang_model, capsys):
    lang, model = lang_model
    answer = solutions.head(model, lang)
    assert l10._diagnose_head(model, lang, answer)[:2] == (True, "l10.ok.head")
    assert graded(l10.check_head, model, lang, answer) is True
    assert graded(l10.check_head, model, lang, None) is None


@pytest.fixture
def fake_mass(monkeypatch):
    mass = torch.tensor([[0.05, 0.30, 0.10], [0.26, 0.02, 0.01], [0.01, 0.01, 0.29]])
    monkeypatch.setattr(l10.heads, "attention_mass",
                        lambda model, lang, *a, **k: l10.heads.HeadMass(mass, 0.04, 100))


@pytest.mark.parametrize("answer, key", [
    ((1, 2), "l10.ok.head"), ((2, 1), "l10.ok.head"),             # 0.26 >= 0.8 * 0.30
    ((1, 3), "l10.hint.head_weak"), ((2, 3), "l10.hint.head_weak"), ((3, 3), "l10.ok.head"),
    ((2, 2), "l10.hint.head_zero_based"),                        # (3, 3) counted from 0
    ((0, 1), "l10.hint.head_zero_based"), ((1, 0), "l10.hint.head_zero_based"),
    ((0, 0), "l10.hint.head_range"), ((4, 1), "l10.hint.head_range"), ((1, 4), "l10.hint.head_range"),
    ("1, 2", "l10.hint.head_format"), ((1,), "l10.hint.head_format"), ((True, 2), "l10.hint.head_format"),
])
def test_head_branches(answer, key, fake_mass, capsys):
    ok, got, fields = l10._diagnose_head(None, "vi", answer)
    assert (ok, got) == (key == "l10.ok.head", key)
    assert graded(l10.check_head, None, "vi", answer) is ok
    verdict = "ex.correct" if ok else "ex.wrong"
    assert capsys.readouterr().out == t(verdict, "en", detail=t(key, "en", **fields)) + "\n"


def test_guess(capsys):
    assert graded(l10.check_guess, None, 0.9, 0.2) is None
    assert graded(l10.check_guess, True, 0.9, 0.2) is True
    assert graded(l10.check_guess, False, 0.9, 0.2) is False
    assert capsys.readouterr().out.splitlines()[-1] == t("ex.wrong", "en", detail=t("l10.hint.guess_other", "en", low=90, high=20))
    assert graded(l10.check_guess, "more", 0.9, 0.2) is False


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_checkers_print_in_every_language(lang, capsys):
    bad = lambda lg, T, k: torch.softmax(lg * T, -1)  # noqa: E731
    assert graded(l10.check_probs, bad, lang=lang) is False
    _, key, fields = l10._diagnose_probs(bad)
    assert capsys.readouterr().out == t("ex.wrong", lang, detail=t(key, lang, **fields)) + "\n"
