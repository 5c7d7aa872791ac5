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

from attnlab.course.i18n import CATALOG, t
from exercise_checks import SEEDS
from solutions import catalogue

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = catalogue.EXERCISES
WRONG = [(e, w) for e in ENTRIES for w in e["wrong"]]


@functools.lru_cache(maxsize=None)
def lesson_namespace(key: str) -> dict:
    """The namespace before the solution, built once per exercise (the lesson models load once)."""
    return catalogue.namespace(next(e for e in ENTRIES if e["key"] == key))


def feedback(entry: dict, source: str, lang: str = "en", seed: int | None = None):
    return catalogue.run(entry, source, lang, ns=lesson_namespace(entry["key"]), seed=seed)


def seeds(entry: dict):
    """The probe seeds an entry is run on: several where its checker draws sizes from a seed."""
    return SEEDS if catalogue.takes_seed(entry) else (None,)


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
    for seed in seeds(entry):
        ok = feedback(entry, entry["reference"], seed=seed)
        assert ok.ok is True and ok.text.startswith("✅"), (seed, ok.text)
        todo = feedback(entry, entry["todo"], seed=seed)
        assert todo.ok is None and todo.key is None, todo.text
        assert todo.text == t("ex.not_done", "en", name=t(_name_key(entry), "en"))


def _name_key(entry: dict) -> str:
    """The exercise's display-name key, as its checker passes it to evaluate."""
    from attnlab.exercises import EXERCISES
    if catalogue.registry_key(entry) in EXERCISES:
        return EXERCISES[catalogue.registry_key(entry)].title
    module, function = entry["evaluate"].split(":")
    source = inspect.getsource(getattr(importlib.import_module(module), function))
    return re.search(r'evaluate\("([a-z0-9_]+\.ex\.[a-z_]+)"', source).group(1)


@pytest.mark.parametrize("entry, wrong", WRONG, ids=[f"{e['key']}:{w['label']}" for e, w in WRONG])
def test_wrong_solution_gets_its_hint(entry, wrong):
    """On every seed: sizes are drawn per run, so a wrong answer must be caught, and named, on each."""
    for seed in seeds(entry):
        got = feedback(entry, wrong["source"], seed=seed)
        assert (got.ok, got.key) == (False, wrong["hint"]), (seed, got.text)
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


BLOCK = next(e for e in ENTRIES if e["key"] == "capstone.block")
MHA_WRONG = next(e for e in ENTRIES if e["key"] == "capstone.multihead")["wrong"]


def _self_attention_differs(source: str, seed: int) -> bool | None:
    """Does this MultiHeadAttention differ from attnlab's on self-attention (the only use the block
    makes of it), with attnlab's weights, at the block checker's sizes for ``seed``? None where it
    raises. Computed here with torch, not by the checker."""
    import torch
    from attnlab import MultiHeadAttention, causal_mask
    from attnlab.exercises import capstone_block
    B, T, H, d_k, _, _ = capstone_block.block_config(seed)
    ns = catalogue.namespace(dict(BLOCK, context=""))
    exec(compile(source, "<wrong MultiHeadAttention>", "exec"), ns)                      # noqa: S102
    torch.manual_seed(5)
    ref = MultiHeadAttention(H * d_k, H).eval()
    try:
        mine = ns["MultiHeadAttention"](H * d_k, H).eval()
        mine.load_state_dict(ref.state_dict())
        x = torch.randn(B, T, H * d_k)
        with torch.no_grad():
            pairs = [(mine(x, mask=m), ref(x, mask=m)) for m in (None, causal_mask(T))]
    except (TypeError, RuntimeError):
        return None
    return any(not (isinstance(a, tuple) and a[0].shape == b[0].shape and torch.allclose(a[0], b[0], atol=1e-5))
               for a, b in pairs)


@pytest.mark.parametrize("wrong", MHA_WRONG, ids=[w["label"] for w in MHA_WRONG])
def test_block_on_a_wrong_exercise_1_names_exercise_1(wrong):
    """Lesson 09's block uses the student's class of exercise 1. A right block on a wrong class: the
    checker says to fix exercise 1 (or names the error exercise 1 raises), never a block mistake; a
    mistake the block never meets (cross-attention only) does not cost the block its point."""
    for seed in (0, 1, 2):
        ns = catalogue.namespace(dict(BLOCK, context=wrong["source"]))
        exec(compile(BLOCK["reference"], "<block>", "exec"), ns)                        # noqa: S102
        from attnlab.exercises import capstone
        got = capstone.evaluate_block(ns["TransformerBlock"], lang="en", seed=seed)
        differs = _self_attention_differs(wrong["source"], seed)
        want = {True: (False, "capstone.hint.attention_first"), False: (True, "capstone.ok.block"),
                None: (False, wrong["hint"])}[differs]
        if differs is None and wrong["hint"] == "capstone.hint.sizes_fixed":
            want = (False, "capstone.hint.attention_first")       # a view that fails at the block's sizes
        assert (got.ok, got.key) == want, (seed, got.text)


def test_block_before_exercise_1_names_exercise_1():
    """A right block on the untouched class of exercise 1 (no q_proj yet): exercise 1 is named, not
    the block's submodules; a block built on torch's nn.MultiheadAttention is told the names it needs."""
    mha = next(e for e in ENTRIES if e["key"] == "capstone.multihead")
    got = catalogue.run(dict(BLOCK, context=mha["todo"]), BLOCK["reference"])
    assert (got.ok, got.key) == (False, "capstone.hint.attention_first"), got.text
    with_torch = BLOCK["reference"].replace("attention_class(d_model, num_heads)",
                                            "nn.MultiheadAttention(d_model, num_heads, batch_first=True)")
    assert with_torch != BLOCK["reference"]
    got = catalogue.run(BLOCK, with_torch)
    assert (got.ok, got.key) == (False, "capstone.hint.names"), got.text


MANY_SEEDS = range(100, 125)
SPLIT_ENTRIES = [e for e in ENTRIES if catalogue.takes_seed(e) and "model" not in e["args"]]


@pytest.mark.slow
@pytest.mark.parametrize("entry", SPLIT_ENTRIES, ids=[e["key"] for e in SPLIT_ENTRIES])
def test_every_answer_on_many_seeds(entry):
    """The sizes are drawn per run: the reference passes, and each wrong answer gets exactly its hint,
    on 25 more seeds (a coincidence of drawn sizes that makes two mistakes look alike shows here)."""
    failures = []
    for seed in MANY_SEEDS:
        for label, source, want in [("reference", entry["reference"], None)] + \
                [(w["label"], w["source"], w["hint"]) for w in entry["wrong"]]:
            got = feedback(entry, source, seed=seed)
            if (got.ok, got.key if want else True) != ((True, True) if want is None else (False, want)):
                failures.append((seed, label, got.key))
    assert not failures, failures


# ------------------------------------------------------------------ every hint earned by its mistake
# A hint that no catalogue answer can earn, with the reason (reviewed here: the list cannot grow unseen).
NO_ANSWER = {
    "ex.no_result": "only for recorded results that are missing or were tampered with (the grader's side); "
                    "no function a student writes produces it",
}
_NOT_HINTS = (".ex.", ".discuss.")


def _hint_keys(module) -> set[str]:
    """Every message key the checkers of ``module`` can give for a wrong answer: the lesson's keys and
    the ``ex.*`` keys named in its source (its verdicts ``*.ok*``, titles and discussions aside)."""
    lesson = module.__name__.rsplit(".", 1)[1]
    parts = sorted(Path(module.__file__).parent.glob(f"{lesson}_*.py"))      # its helper modules (l01_attention)
    source = inspect.getsource(module) + "".join(p.read_text(encoding="utf-8") for p in parts)
    keys = set(re.findall(r'"((?:%s|ex)\.[a-z0-9_.]+)"' % lesson, source))
    keys -= set(re.findall(r'Msg\("([a-z0-9_.]+)"\)', source))            # a part of another message
    return {k for k in keys if k in CATALOG and not any(p in k for p in _NOT_HINTS)
            and not re.search(r"\.ok(\.|$)", k) and not k.startswith(f"{lesson}.ex")}


def _converted_modules():
    from attnlab import exercises
    return [m for m in (exercises.l01, exercises.l02, exercises.l03, exercises.l04, exercises.l05, exercises.l06,
                        exercises.l07, exercises.l08, exercises.capstone_steps, exercises.capstone, exercises.l10)
            if getattr(m, "EXERCISES", ())]


@pytest.mark.parametrize("module", _converted_modules(), ids=lambda m: m.__name__.rsplit(".", 1)[1])
def test_every_hint_is_earned_by_a_wrong_answer_of_that_mistake(module):
    """Each hint a (converted) checker can give is the hint of at least one catalogue wrong answer,
    one that embodies that mistake. With test_wrong_solution_gets_its_hint (each answer gets exactly
    its hint, on every seed) no answer of another mistake gets it, and no hint is left untested."""
    try:
        from solutions import catalogue_l10
        extra = catalogue_l10.EXERCISES
    except ImportError:                                   # pragma: no cover
        extra = []
    lesson = module.__name__.rsplit(".", 1)[1]
    earned = {w["hint"] for e in ENTRIES + list(extra) for w in e["wrong"]
              if e["evaluate"].startswith(f"{module.__name__}:")}
    missing = sorted(_hint_keys(module) - earned - set(NO_ANSWER))
    assert not missing, f"hints of {lesson} no catalogue answer earns (add one to solutions/catalogue.py): {missing}"
    unused = sorted(k for k in earned if k.startswith(lesson + ".") and k not in _hint_keys(module))
    assert not unused, f"catalogue hints {lesson}'s checkers never give: {unused}"


# ------------------------------------------------------------------ messages that agree with themselves
_DIFFERENCES = ("diff", "drift", "leak")                             # fields that say how far off a result is
_PAIRS = (("got", "want"), ("got", "expected"), ("got", "need"), ("got", "d_k"), ("c", "want"), ("got", "bh"))


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["key"] for e in ENTRIES])
def test_no_message_contradicts_itself(entry):
    """Review 2026-12-01b: "differs … (largest difference 0.0e+00)", "got 6 units, need 6". For every
    wrong answer: no difference printed as zero, and where a hint shows what came back beside what was
    expected, the two differ. Read on the judge's fields where the checker is split, on the text for all."""
    from attnlab.exercises import EXERCISES, _common
    key = catalogue.registry_key(entry)
    split = key in EXERCISES and "model" not in entry["args"]
    for wrong in entry["wrong"]:
        for seed in seeds(entry):
            if not split:                                         # an old-style checker: its text only
                text = feedback(entry, wrong["source"], seed=seed).text
                assert not re.search(r"0[.,]0e\+00", text), (wrong["label"], text)
                continue
            ns = dict(lesson_namespace(entry["key"]))
            exec(catalogue.cell(wrong["source"], entry["key"]), ns)                 # noqa: S102
            diagnosis = EXERCISES[key].diagnose(*(ns.get(a) for a in entry["args"]), seed=seed)
            fields = diagnosis[2]
            for lang in ("en", "vi", "zh"):
                text = _common.word(EXERCISES[key].title, diagnosis, lang).text
                assert not re.search(r"0[.,]0e\+00", text), (wrong["label"], lang, text)
            for name in _DIFFERENCES:
                if isinstance(fields.get(name), float):
                    assert fields[name] > 0, (wrong["label"], fields)
            for a, b in _PAIRS:
                if a in fields and b in fields:
                    assert str(fields[a]) != str(fields[b]), (wrong["label"], fields)
