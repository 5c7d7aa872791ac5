"""Lesson 10's wrong-solution catalogue: every reference passes and every wrong entry gets exactly
its hint, on several seeds and in each corpus language; the judges also read the results back in
a second process (``save_results`` / ``load_results``) and give the same verdicts."""
from __future__ import annotations

import importlib
import inspect

import pytest

import attnlab
from attnlab import poet
from attnlab.exercises import EXERCISES as REGISTRY, load_results, save_results
from exercise_checks import SEEDS

from solutions import l10 as solutions
from solutions.catalogue import cell
from solutions.catalogue_l10 import EXERCISES

MODELS: dict = {}


def _namespace(lang):
    if lang not in MODELS:
        model, stored = poet.load_pretrained(lang), poet.read_checkpoint(lang)["samples"]
        low, high = (poet.form(lang).report(stored[tau])["lines"].rate for tau in ("0.3", "1.5"))
        MODELS[lang] = {"model": model, "LOW": low, "HIGH": high}
    return {**MODELS[lang], "LANG": lang, "__name__": "__lesson__"}


def _objects(entry, source, lang):
    ns = _namespace(lang)
    exec(cell(source, f"{entry['key']} {lang}"), ns)                          # noqa: S102
    return [ns[a] for a in entry["call"]]


def _evaluate(entry, source, lang, seed):
    module, name = entry["evaluate"].split(":")
    evaluate = getattr(importlib.import_module(module), name)
    takes_seed = "seed" in inspect.signature(evaluate).parameters
    return evaluate(*_objects(entry, source, lang), lang="en", **({"seed": seed} if takes_seed else {}))


def _reference(entry, lang):
    ref = entry["reference"]
    return ref[lang] if isinstance(ref, dict) else ref


GRADED = [e for e in EXERCISES if e.get("graded", True)]
REFS = [(e, lang, seed) for e in EXERCISES for lang in e["langs"] for seed in SEEDS]
CASES = [(e, w, lang) for e in EXERCISES for w in e["wrong"] for lang in w.get("langs", e["langs"])]


def test_the_catalogue_covers_every_graded_exercise():
    assert [e["key"] for e in EXERCISES] == ["l10.probs", "l10.pattern", "l10.rhymes", "l10.head", "l10.guess"]
    assert {k for k in REGISTRY if k.startswith("l10.")} == {e["key"] for e in GRADED}
    assert "l10.guess" not in REGISTRY                                          # ungraded: no grader calls it
    for e in GRADED:
        assert len(e["wrong"]) >= 4 and e["lesson"] == "10_poet_gpt"
        for lang in e["langs"]:
            assert all(n in _reference(e, lang) for n in e["names"])
            assert sum(lang in w.get("langs", e["langs"]) for w in e["wrong"]) >= 4, (e["key"], lang)


@pytest.mark.parametrize("entry, lang, seed", REFS, ids=[f"{e['key']}-{lang}-{s}" for e, lang, s in REFS])
def test_reference_passes(entry, lang, seed):
    feedback = _evaluate(entry, _reference(entry, lang), lang, seed)
    assert feedback.ok is True, feedback.text


@pytest.mark.parametrize("entry, wrong, lang", CASES, ids=[f"{e['key']}-{w['label']}-{lang}" for e, w, lang in CASES])
def test_wrong_entry_gets_its_hint(entry, wrong, lang):
    for seed in SEEDS:
        feedback = _evaluate(entry, wrong["source"], lang, seed)
        assert (feedback.ok, feedback.key) == (False, wrong["hint"]), (seed, feedback.text)


@pytest.mark.parametrize("entry", GRADED, ids=lambda e: e["key"])
def test_the_judge_in_another_process_agrees(entry, tmp_path):
    """The grader's path: probe here, results on disk, the judge on what it reads back."""
    ex = REGISTRY[entry["key"]]
    lang = entry["langs"][-1]
    for source, ok in [(_reference(entry, lang), True)] + [(w["source"], False) for w in entry["wrong"][:3]
                                                           if lang in w.get("langs", entry["langs"])]:
        results = ex.probe(*_objects(entry, source, lang), seed=SEEDS[0])
        save_results(tmp_path / "r.pt", results)
        assert (ex.judge(load_results(tmp_path / "r.pt"), seed=SEEDS[0])[0] is True) == ok


def test_the_untouched_todo_is_not_done_and_the_titles_are_words():
    for entry in GRADED:
        ex = REGISTRY[entry["key"]]
        for lang in ("vi", "zh"):
            title = attnlab.t(ex.title, lang)
            assert " " in title or not title.isascii(), title            # words, not a Python name
    assert attnlab.exercises.l10.evaluate_pattern(lambda line: None, "vi", seed=1).ok is None
    assert attnlab.exercises.l10.evaluate_head(None, "zh", None, seed=1).ok is None
    assert attnlab.exercises.l10.evaluate_probs(solutions.probs, seed=3).ok is True


def test_the_head_answer_is_not_given_by_a_hint():
    """The format hint has no example pair; the lesson's example (4, 2) is weak in both languages."""
    for lang in ("vi", "zh"):
        text = attnlab.t("l10.hint.head_format", lang, got="'x'")
        assert not any(ch.isdigit() for ch in text)
        best = solutions.head(_namespace(lang)["model"], lang)
        assert best != (4, 2) and (best[0] - 1, best[1] - 1) != (4, 2)


@pytest.mark.parametrize("entry", GRADED, ids=lambda e: e["key"])
def test_judges_treat_results_as_hostile_data(entry):
    """As tests/test_exercises_interface.py does for lessons 01-09: spoiled results (junk outcomes,
    junk values and errors, missing keys) give a wrong answer or 'not done' with a message that
    exists, never an exception and never a pass."""
    from attnlab.course.i18n import CATALOG
    from test_exercises_interface import _tampered
    ex = REGISTRY[entry["key"]]
    lang = entry["langs"][0]
    results = ex.probe(*_objects(entry, _reference(entry, lang), lang), seed=3)
    assert ex.judge(results, seed=3)[0] is True
    assert ex.title in CATALOG and ex.arguments == tuple(entry["call"])
    for label, spoiled in _tampered(results):
        ok, message, fields = ex.judge(spoiled, seed=3)
        assert ok is not True and message in CATALOG, (label, ok, message)
        assert ex.verdict(spoiled, seed=3, lang="vi").text, label
    if "lang" in results:                           # the corpus language is data too
        for junk in (7, "fr", None):
            assert ex.judge({**results, "lang": junk}, seed=3)[0] is not True
