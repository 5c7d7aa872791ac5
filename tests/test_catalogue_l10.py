"""Lesson 10's wrong-solution catalogue: every reference passes, every wrong entry gets exactly its hint."""
from __future__ import annotations

import importlib

import pytest

from attnlab import poet
from attnlab.exercises import l10

from solutions.catalogue_l10 import EXERCISES

MODELS = {}


def _run(entry, source, lang):
    if lang not in MODELS:
        MODELS[lang] = poet.load_pretrained(lang)
    ns = {"model": MODELS[lang], "lang": lang}
    exec(compile(source, f"<{entry['key']}>", "exec"), ns)
    module, name = entry["evaluate"].split(":")
    evaluate = getattr(importlib.import_module(module), name)
    return evaluate(*(ns[a] for a in entry["call"]), lang="en")


CASES = [(e, w, lang) for e in EXERCISES for w in e["wrong"] for lang in w.get("langs", e["langs"])]


def test_the_catalogue_covers_every_graded_exercise():
    assert [e["key"] for e in EXERCISES] == ["l10.probs", "l10.units", "l10.head"]
    for e in EXERCISES:
        assert len(e["wrong"]) >= 4 and e["lesson"] == "10_poet_gpt"
        assert all(n in e["reference"] for n in e["names"])


@pytest.mark.parametrize("entry, lang", [(e, lang) for e in EXERCISES for lang in e["langs"]],
                         ids=lambda x: x["key"] if isinstance(x, dict) else x)
def test_reference_passes(entry, lang):
    assert _run(entry, entry["reference"], lang).ok is True


@pytest.mark.parametrize("entry, wrong, lang", CASES,
                         ids=[f"{e['key']}-{w['label']}-{lang}" for e, w, lang in CASES])
def test_wrong_entry_gets_its_hint(entry, wrong, lang):
    ns = {"model": MODELS.get(lang) or poet.load_pretrained(lang), "lang": lang}
    exec(compile(wrong["source"], "<wrong>", "exec"), ns)
    args = [ns[a] for a in entry["call"]]
    diagnose = {"l10.probs": l10._diagnose_probs, "l10.units": l10._diagnose_units,
                "l10.head": l10._diagnose_head}[entry["key"]]
    ok, key, _ = diagnose(*args)
    assert (ok, key) == (False, wrong["hint"])
    assert _run(entry, wrong["source"], lang).ok is False
