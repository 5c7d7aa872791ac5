"""The exercise catalogue (solutions/catalogue.py): for every exercise of lessons 01-09 the checker
accepts the reference solution, rejects every plausible wrong solution with exactly its hint, and
says "not done" for the notebook's untouched TODO cell."""
from __future__ import annotations

import functools
import importlib
import inspect
import json
import re
import string
from pathlib import Path

import pytest

from attnlab.i18n import CATALOG, t
from solutions import catalogue

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = catalogue.EXERCISES
WRONG = [(e, w) for e in ENTRIES for w in e["wrong"]]


@functools.lru_cache(maxsize=None)
def lesson_namespace(key: str) -> dict:
    """The namespace before the solution, built once per exercise (the lesson models load once)."""
    return catalogue.namespace(next(e for e in ENTRIES if e["key"] == key))


def feedback(entry: dict, source: str, lang: str = "en"):
    return catalogue.run(entry, source, lang, ns=lesson_namespace(entry["key"]))


def fixed_text(key: str, lang: str = "en") -> str:
    """The longest stretch of a message's text without fields: it must appear in the feedback."""
    pieces = [literal for literal, *_ in string.Formatter().parse(CATALOG[key][lang])]
    return max(pieces, key=len).strip()


def test_one_entry_per_exercise_of_every_lesson():
    """As many entries as TODO cells with a check in the notebooks, in lesson order, keys unique."""
    todo_cells = 0
    for path in sorted((ROOT / "lessons_vi").glob("0*.ipynb")):
        for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
            source = "".join(cell["source"])
            todo_cells += cell["cell_type"] == "code" and "TODO" in source and ".check_" in source
    assert len(ENTRIES) == todo_cells == 31
    assert len({e["key"] for e in ENTRIES}) == len(ENTRIES)
    lessons = [e["lesson"] for e in ENTRIES]
    assert lessons == sorted(lessons) and {e["lesson"][:2] for e in ENTRIES} == {f"0{i}" for i in range(1, 10)}


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["key"] for e in ENTRIES])
def test_entry_format(entry):
    assert set(entry) >= {"key", "lesson", "evaluate", "names", "reference", "wrong", "context", "args", "todo"}
    assert (ROOT / "lessons_vi" / f"{entry['lesson']}.ipynb").exists()
    assert (ROOT / "lessons_zh" / f"{entry['lesson']}.ipynb").exists()
    assert len(entry["wrong"]) >= 4
    assert len({w["source"] for w in entry["wrong"]}) == len(entry["wrong"])            # no duplicates
    for wrong in entry["wrong"]:
        assert set(wrong) - {"hint_by_lang"} == {"label", "source", "hint"} and wrong["hint"] in CATALOG
        assert all(key in CATALOG for key in wrong.get("hint_by_lang", {}).values())
        assert wrong["source"] != entry["reference"]
    for name in entry["names"]:                                                          # every source defines the names
        pattern = re.compile(rf"^(def {name}\(|class {name}\(|{name} = )", re.M)
        assert all(pattern.search(src) for src in [entry["reference"], entry["todo"]] + [w["source"] for w in entry["wrong"]])


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["key"] for e in ENTRIES])
def test_reference_passes_and_todo_is_not_done(entry):
    ok = feedback(entry, entry["reference"])
    assert ok.ok is True and ok.text.startswith("✅"), ok.text
    todo = feedback(entry, entry["todo"])
    assert todo.ok is None and todo.key is None, todo.text
    assert todo.text == t("ex.not_done", "en", name=t(_name_key(entry), "en"))


def _name_key(entry: dict) -> str:
    """The exercise's display-name key, as its checker passes it to evaluate."""
    module, function = entry["evaluate"].split(":")
    source = inspect.getsource(getattr(importlib.import_module(module), function))
    return re.search(r'evaluate\("([a-z0-9_]+\.ex\.[a-z_]+)"', source).group(1)


@pytest.mark.parametrize("entry, wrong", WRONG, ids=[f"{e['key']}:{w['label']}" for e, w in WRONG])
def test_wrong_solution_gets_its_hint(entry, wrong):
    got = feedback(entry, wrong["source"])
    assert (got.ok, got.key) == (False, wrong["hint"]), got.text
    assert got.text.startswith("❌") and fixed_text(wrong["hint"]) in got.text


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_hints_are_worded_in_the_lesson_languages(lang):
    """The same verdicts in vi and zh (every exercise's first and last wrong solution)."""
    for entry, wrong in [(e, w) for e in ENTRIES for w in (e["wrong"][0], e["wrong"][-1])]:
        got = feedback(entry, wrong["source"], lang)
        assert (got.ok, got.key) == (False, wrong["hint"])
        assert fixed_text(wrong["hint"], lang) in got.text


def test_display_names_are_words_not_identifiers():
    """Review B16: an exercise is named as a teacher would name it, never by the TODO's identifier."""
    for entry in ENTRIES:
        for lang in ("vi", "zh", "en"):
            name = t(_name_key(entry), lang)
            assert name not in entry["names"] and not re.fullmatch(r"[a-z_]+", name), (entry["key"], lang, name)
