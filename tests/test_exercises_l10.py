"""Lesson 10 checkers: each accepts the reference solution on every seed, rejects each typical
mistake with its own hint (tests/test_catalogue_l10.py runs the whole catalogue), reports 'not
done' for the untouched TODO, never gives the answer away, and prints in every language."""
from __future__ import annotations

import pytest
import torch

from attnlab import poet
from attnlab.course.i18n import t
from attnlab.exercises import l10, l10_verse
from exercise_checks import SEEDS, graded, todo

from solutions import l10 as solutions

PATTERN = {"vi": solutions.pattern_vi, "zh": solutions.pattern_zh}
RHYMES = {"vi": solutions.rhymes_vi, "zh": solutions.rhymes_zh}


@pytest.mark.parametrize("seed", SEEDS)
def test_probs_accepts_the_solution_and_the_package_on_every_seed(seed):
    assert l10.judge_probs(l10.probe_probs(solutions.probs, seed=seed), seed=seed) == (True, "l10.ok.probs", {})
    # correct variants: top-k on the logits with -inf then the softmax; ties kept through >=
    def on_logits(lg, T, k):
        z = lg / T
        if k is not None:
            z = torch.where(z >= z.topk(k).values[-1], z, -torch.inf)
        return torch.softmax(z, -1)
    assert l10.evaluate_probs(on_logits, seed=seed).ok is True


def test_probs_cases_have_ties_and_none_first():
    cases = l10._probs_cases(5)
    assert cases[0][2] is None and cases[0][1] == 1.0
    logits, _, k = cases[5]
    top = logits.topk(k + 1).values
    assert top[k - 1] == top[k]                                      # a tie at the k-th place
    assert len({len(c[0]) for c in l10._probs_cases(1)} | {len(c[0]) for c in l10._probs_cases(2)}) > 2


def test_probs_not_done_and_errors(capsys):
    assert graded(l10.check_probs, todo) is None
    assert capsys.readouterr().out == t("ex.not_done", "en", name=t("l10.ex.probs", "en")) + "\n"
    assert graded(l10.check_probs, lambda lg, T, k: lg.nonexistent) is False
    assert capsys.readouterr().out.startswith("❌ Your code raised AttributeError")


@pytest.mark.parametrize("lang", ["vi", "zh"])
@pytest.mark.parametrize("seed", SEEDS[:3])
def test_verse_exercises_accept_the_solutions(lang, seed):
    assert l10.evaluate_pattern(PATTERN[lang], lang, seed=seed).ok is True
    assert l10.evaluate_rhymes(RHYMES[lang], lang, seed=seed).ok is True
    assert l10.evaluate_pattern(todo, lang, seed=seed).ok is None
    assert l10.evaluate_rhymes(todo, lang, seed=seed).ok is None


def test_the_other_languages_solution_is_wrong():
    assert l10.evaluate_pattern(solutions.pattern_vi, "zh", seed=0).ok is False
    assert l10.evaluate_rhymes(solutions.rhymes_zh, "vi", seed=0).ok is False


def test_a_forgotten_return_is_wrong_not_undone():
    def no_return(line):
        form = poet.form("vi")
        [form.units(line)]
    assert l10.evaluate_pattern(no_return, "vi", seed=0).key == "ex.returned_none"


def test_the_fixed_rhyme_pairs_have_the_packages_answers():
    for a, b, _ in l10_verse.VI_PAIRS:
        assert solutions.rhymes_vi(a, b) == (poet.luc_bat.rhyme_kind(a, b) == "chinh"), (a, b)
    for a, b, _ in l10_verse.ZH_PAIRS:
        assert solutions.rhymes_zh(a, b) == poet.jinti.rhymes(a, b), (a, b)


def test_the_exercise_tests_extension_characters_and_missing_ones():
    lines = l10_verse._pattern_cases(0, "zh")
    assert any(ord(c) > 0x9FFF for line in lines for c in line)           # 𦶟
    assert any(0x3400 <= ord(c) < 0x4E00 for line in lines for c in line)  # 䪥
    assert any(poet.jinti.tone_class(c) is None for line in lines for c in poet.form("zh").units(line))


@pytest.fixture
def fake_mass(monkeypatch):
    mass = torch.tensor([[0.05, 0.30, 0.10], [0.26, 0.02, 0.01], [0.01, 0.01, 0.29]])
    monkeypatch.setattr(l10, "_mass", lambda lang: (mass, 0.04))


@pytest.mark.parametrize("answer, key", [
    ((1, 2), "l10.ok.head"), ((2, 1), "l10.ok.head"),             # 0.26 >= 0.8 * 0.30
    ((1, 3), "l10.hint.head_weak"), ((2, 3), "l10.hint.head_weak"), ((3, 3), "l10.ok.head"),
    ((2, 2), "l10.hint.head_zero_based"),                        # (3, 3) counted from 0
    ((0, 1), "l10.hint.head_zero_based"), ((1, 0), "l10.hint.head_zero_based"),
    ((0, 0), "l10.hint.head_range"), ((4, 1), "l10.hint.head_range"), ((1, 4), "l10.hint.head_range"),
    ("1, 2", "l10.hint.head_format"), ((1,), "l10.hint.head_format"), ((True, 2), "l10.hint.head_format"),
    ([1, 2], "l10.ok.head"),
])
def test_head_branches(answer, key, fake_mass, capsys):
    ok, got, fields = l10.judge_head(l10.probe_head(None, "vi", answer, seed=0), seed=0)
    assert (ok, got) == (key == "l10.ok.head", key)
    assert graded(l10.check_head, None, "vi", answer) is ok
    verdict = "ex.correct" if ok else "ex.wrong"
    assert capsys.readouterr().out == t(verdict, "en", detail=t(key, "en", **fields)) + "\n"


def test_head_on_the_checkpoints_and_the_reveal_gate(capsys):
    from attnlab import exercises
    for lang in ("vi", "zh"):
        model = poet.load_pretrained(lang)
        assert l10.evaluate_head(model, lang, None).ok is None
        exercises.reveal("l10.head", "THE ANSWER")
        assert "THE ANSWER" not in capsys.readouterr().out            # locked until the student's answer passed
        assert l10.evaluate_head(model, lang, solutions.head(model, lang)).ok is True
        exercises.reveal("l10.head", "THE ANSWER")
        assert capsys.readouterr().out == "THE ANSWER\n"
        assert exercises.passed("l10.head")
    assert l10.judge_head({"lang": "fr", "answer": {"value": [1, 1]}}, seed=0)[1] == "ex.no_result"


def test_guess(capsys):
    assert graded(l10.check_guess, None, 0.9, 0.2) is None
    assert graded(l10.check_guess, True, 0.9, 0.2) is True
    assert graded(l10.check_guess, False, 0.9, 0.2) is False
    assert capsys.readouterr().out.splitlines()[-1] == t("ex.wrong", "en", detail=t("l10.hint.guess_other", "en", low=90, high=20))
    assert graded(l10.check_guess, "more", 0.9, 0.2) is False


@pytest.mark.parametrize("lang", ["vi", "zh", "en"])
def test_checkers_print_in_every_language(lang, capsys):
    bad = lambda lg, T, k: torch.softmax(lg * T, -1)  # noqa: E731
    assert graded(l10.check_probs, bad, lang=lang, seed=0) is False
    _, key, fields = l10.judge_probs(l10.probe_probs(bad, seed=0), seed=0)
    assert capsys.readouterr().out == t("ex.wrong", lang, detail=t(key, lang, **fields)) + "\n"


def test_the_spelling_rule_of_exercise_3_is_the_packages_vần_chính():
    """The lesson's rule (drop tone, onset with gi/qu, medial; a leading y read as i) and
    ``luc_bat.rhyme_kind == "chinh"`` agree on pairs of the syllables at Kiều's rhyme positions."""
    import random
    form = poet.form("vi")
    lines = [form.units(line) for line in poet.read_text("vi").splitlines()]
    syllables = sorted({s.lower() for u in lines for s in (u[5], u[-1])})
    rng = random.Random(0)
    pairs = [(rng.choice(syllables), rng.choice(syllables)) for _ in range(20000)]
    pairs += [(lines[i][5].lower(), lines[i + 1][5].lower()) for i in range(0, len(lines), 2)]
    bad = [(a, b) for a, b in pairs if solutions.rhymes_vi(a, b) != (poet.luc_bat.rhyme_kind(a, b) == "chinh")]
    assert not bad, bad[:10]
