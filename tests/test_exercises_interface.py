"""The checker interface (docs/checkers.md): probe and judge, results as safe plain data, the
untouched TODO told apart from a forgotten ``return``, forbidden calls read from the source, the
registry, and ``passed`` / ``reveal``. Each exercise converted to the split is run here through the
registry with its catalogue entries, so a new one is covered without a new test."""
from __future__ import annotations

import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch

import attnlab
from attnlab.exercises import EXERCISES, _common
from attnlab.course.i18n import CATALOG, t
from solutions import catalogue

ROOT = Path(__file__).resolve().parents[1]
ENTRIES = {catalogue.registry_key(e): e for e in catalogue.EXERCISES}     # by registry key
SPLIT = sorted(k for k in EXERCISES if k in ENTRIES and "model" not in ENTRIES[k]["args"])   # (no lesson model)


# ------------------------------------------------------------------------ not done vs no return
def todo_return_none(x):
    # TODO: write it
    return None


def todo_pass(x):
    """A docstring does not count as code."""
    pass


def todo_ellipsis(x):
    ...


def forgot_return(scores, mask):
    scores.masked_fill_(~mask, float("-inf"))


def computed_then_none(x):
    y = x + 1         # noqa: F841
    return None


class TodoModule(torch.nn.Module):
    def forward(self, x):
        # TODO
        return None


class WrittenModule(torch.nn.Module):
    def forward(self, x):
        x = x * 2     # noqa: F841


@pytest.mark.parametrize("fn", [None, ..., todo_return_none, todo_pass, todo_ellipsis, lambda *a, **k: None,
                                TodoModule, TodoModule()])
def test_the_untouched_todo_is_not_done(fn):
    assert _common.untouched(fn)
    if not isinstance(fn, type):                           # (a class is constructed, not called on x)
        assert _common.attempt(fn, torch.zeros(2))["not_done"] is True


@pytest.mark.parametrize("fn", [forgot_return, computed_then_none, WrittenModule(), lambda x: print(x)])
def test_a_written_function_that_returns_none_is_a_wrong_answer(fn, capsys):
    """Review 2026-12-01b: a forgotten ``return`` was reported as "not attempted"."""
    assert not _common.untouched(fn)
    args = (torch.zeros(2, 2), torch.ones(2, 2, dtype=torch.bool)) if fn is forgot_return else (torch.zeros(2),)
    assert _common.attempt(fn, *args)["value"] is None
    with pytest.raises(_common.ReturnedNone):
        _common.call_student(fn, *args)
    fb = _common.evaluate("l01.ex.softmax", lambda: (True, "l01.softmax.ok", {}) if _common.call_student(fn, *args)
                          else None, "vi")
    assert (fb.ok, fb.key) == (False, "ex.returned_none") and fb.text == t("ex.wrong", "vi",
                                                                        detail=t("ex.returned_none", "vi"))


def test_attempt_records_plain_data():
    x = torch.arange(6.0).view(2, 3)
    assert set(_common.attempt(lambda a: (a.sum(), [1, 2.5, "s", None], {"k": True}), x)) == {"value", "changed"}
    out = _common.attempt(lambda a: (a.sum(), [1, 2.5, "s", None], {"k": True}), x)["value"]
    assert isinstance(out, tuple) and float(out[0]) == 15 and out[1] == [1, 2.5, "s", None] and out[2] == {"k": True}
    np = pytest.importorskip("numpy")
    array = _common.attempt(lambda a: a.numpy() * 2, x)["value"]
    assert array["__type__"] == "ndarray" and torch.equal(_common.as_tensor(array), x * 2)
    assert _common.attempt(lambda a: object(), x)["value"] == {"__type__": "object"}
    assert _common.attempt(lambda a: np.int64(3), x)["value"] == 3
    err = _common.attempt(lambda a: a.view(5), x)["error"]
    assert err["type"] == "RuntimeError" and "Exception" in err["types"] and "invalid for input" in err["message"]
    assert _common.attempt(lambda a: a.add_(1), x)["changed"] == [0]
    assert _common.attempt(lambda a: (_ for _ in ()).throw(NotImplementedError), x) == {"not_done": True}
    with pytest.raises(ValueError):
        _common.check_plain({"a": object()})
    _common.check_plain(_common.attempt(lambda a: (a, object(), {1: 2}), x))     # whatever is returned: plain


def test_draw_never_touches_the_global_generator():
    torch.manual_seed(3)
    state = torch.random.get_rng_state()
    d = _common.Draw(5, "x")
    values = (d.int(1, 9), d.sample(range(10), 3), d.randn(2, 2), d.perm(4), d.uniform(0, 1))
    assert torch.equal(torch.random.get_rng_state(), state)
    again = _common.Draw(5, "x")
    assert (again.int(1, 9), again.sample(range(10), 3)) == values[:2]
    seeds = {_common.fresh_seed() for _ in range(20)}
    assert len(seeds) > 15 and torch.equal(torch.random.get_rng_state(), state)


# ------------------------------------------------------------------------ results on disk
def test_results_round_trip_and_reject_pickled_objects(tmp_path):
    results = {"case0": {"value": (torch.ones(2), [1, "a", None, 2.5, True]), "changed": []}, "source": "x"}
    _common.save_results(tmp_path / "r.pt", results)
    back = _common.load_results(tmp_path / "r.pt")
    assert torch.equal(back["case0"]["value"][0], torch.ones(2)) and back["case0"]["value"][1] == [1, "a", None, 2.5, True]
    with pytest.raises(ValueError):
        _common.save_results(tmp_path / "bad.pt", {"x": object()})
    # A results file that carries a pickled object (one that would run code when unpickled) is refused.
    marker = tmp_path / "pwned"
    torch.save({"case0": Evil(str(marker))}, tmp_path / "evil.pt")
    with pytest.raises(Exception):
        _common.load_results(tmp_path / "evil.pt")
    assert not marker.exists()


class Evil:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (Path.touch, (Path(self.path),))


# ------------------------------------------------------------------------ the registry
def test_the_registry_matches_the_catalogue():
    """Every registered exercise has catalogue entries (lesson 10's in solutions/catalogue_l10.py),
    under the key a grader derives from the check call, with the same names and arguments."""
    from solutions import catalogue_l10
    lesson_10 = {catalogue.registry_key(e): e for e in catalogue_l10.EXERCISES}
    assert {"l01.softmax", "l01.attention", "l01.dot_std"} <= set(EXERCISES)
    for key, exercise in EXERCISES.items():
        if key in catalogue.WITHOUT_TODO:          # a checked cell with no TODO of its own (lesson 09 §5)
            continue
        entry = ENTRIES.get(key) or lesson_10.get(key)
        assert exercise.key == key and exercise.title in CATALOG and entry is not None, key
        assert exercise.name == exercise.title
        assert exercise.names == tuple(entry["names"]), key
        assert exercise.arguments == tuple(entry.get("args") or entry.get("call")), key
        assert catalogue.takes_seed(entry), key


def test_probe_in_one_process_judge_in_another(tmp_path):
    """The grader's way: probe (here), save, then load and judge in a clean Python process: the
    same verdicts as evaluate in one process, for every split exercise's reference and wrong answers."""
    want, jobs = {}, []
    for key in SPLIT:
        entry, exercise = ENTRIES[key], EXERCISES[key]
        sources = [entry["reference"]] + [w["source"] for w in entry["wrong"]]
        for n, source in enumerate(sources):
            ns = catalogue.namespace(entry)
            exec(catalogue.cell(source, key), ns)                               # noqa: S102
            path = tmp_path / f"{key}-{n}.pt"
            _common.save_results(path, exercise.probe_namespace(ns, seed=7 + n))
            fb = exercise.evaluate(*(ns.get(a) for a in exercise.arguments), seed=7 + n)
            want[path.name] = [fb.ok, fb.key, fb.text]
            jobs.append((key, str(path), 7 + n))
        assert want[f"{key}-0.pt"][0] is True, key
    (tmp_path / "jobs.json").write_text(json.dumps(jobs))
    script = ("import json, sys, pathlib\nfrom attnlab.exercises import EXERCISES, load_results\nout = {}\n"
              "for key, path, seed in json.loads(pathlib.Path(sys.argv[1]).read_text()):\n"
              "    fb = EXERCISES[key].verdict(load_results(path), seed=seed, lang='en')\n"
              "    out[pathlib.Path(path).name] = [fb.ok, fb.key, fb.text]\n"
              "print(json.dumps(out))\n")
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", script, str(tmp_path / "jobs.json")], capture_output=True,
                          text=True, env=env, cwd=tmp_path, timeout=300)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == want


JUNK = [None, "text", 3, -1.5, math.nan, [], (), {}, [None], {"__type__": "Evil"}, torch.tensor(math.nan),
        torch.zeros(0), torch.ones(2, 3), torch.full((4, 4), math.nan), torch.ones(3, dtype=torch.bool),
        (torch.ones(2), torch.ones(2)), torch.randn(1, 1, 5, 5)]


def _tampered(results: dict):
    """Every way of spoiling recorded results: outcomes replaced by junk, junk values, junk errors,
    missing outcomes, results that are not a dict."""
    yield "not a dict", ["nope"]
    yield "empty", {}
    yield "one error (the grader: no probe ran)", {"error": {"type": "NameError", "message": "x", "cause": None}}
    yield "one junk error", {"error": "gone"}
    cases = [k for k, v in results.items() if isinstance(v, dict) and ({"value", "error"} & set(v))]
    for key in cases[:1] + cases[-1:]:                    # the first and the last recorded call
        for n, junk in enumerate(JUNK):
            yield f"{key}: outcome {n}", {**results, key: junk}
            yield f"{key}: value {n}", {**results, key: {"value": junk, "changed": []}}
        yield f"{key}: error", {**results, key: {"error": {"type": 3, "types": "x", "message": None}}}
        yield f"{key}: error junk", {**results, key: {"error": "boom"}}
        rest = dict(results)
        del rest[key]
        yield f"{key}: missing", rest


@pytest.mark.parametrize("key", SPLIT)
def test_judges_treat_results_as_hostile_data(key):
    """Missing keys, wrong types, wrong shapes, NaN: a wrong answer (or not done) with a message
    that exists, never an exception and never a pass."""
    entry, exercise = ENTRIES[key], EXERCISES[key]
    ns = catalogue.namespace(entry)
    exec(catalogue.cell(entry["reference"], key), ns)                            # noqa: S102
    results = exercise.probe_namespace(ns, seed=3)
    assert exercise.judge(results, seed=3)[0] is True
    for label, spoiled in _tampered(results):
        ok, message, fields = exercise.judge(spoiled, seed=3)
        assert ok is not True and message in CATALOG, (label, ok, message)
        assert exercise.verdict(spoiled, seed=3, lang="vi").text, label          # worded without an error
    for key in [k for k, v in results.items() if isinstance(v, dict) and "value" in v]:  # junk "changed": ignored
        spoiled = {**results, key: {**results[key], "changed": ["0", None, True, 2.5, "x"]}}
        assert exercise.judge(spoiled, seed=3)[0] is True


# ------------------------------------------------------------------------ forbidden calls
@pytest.mark.parametrize("source, hit", [
    ("def f(T):\n    return attnlab.causal_mask(T)\n", "causal_mask"),
    ("def f(T):\n    from attnlab import causal_mask\n    return causal_mask(T)\n", "causal_mask"),
    ("def f(T):\n    return getattr(attnlab, 'causal_mask')(T)\n", "causal_mask"),
    ("def causal_mask(T):\n    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]\n", None),
    ("def f(T):\n    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]\n", None),
    ("def f(T):\n    # attnlab.causal_mask is not used here\n    return torch.ones(T)\n", None),
    ("def causal_mask(T):\n    return attnlab.causal_mask(T)\n", "causal_mask"),
])
def test_forbidden_calls_are_read_from_the_source(source, hit):
    assert _common.forbidden_use({"source": source}, {"causal_mask"}) == hit


def test_forbidden_calls_without_the_source_use_the_references():
    """No source (a function built with exec): the code's names and its globals' qualified names,
    which also catch an alias made in another cell."""
    ns = {"attnlab": attnlab, "torch": torch}
    exec("cm = attnlab.causal_mask\ndef f(T):\n    return cm(T)\ndef g(T):\n    return attnlab.causal_mask(T)\n"
         "def h(T):\n    return torch.tril(torch.ones(T, T, dtype=torch.bool))\n", ns)          # noqa: S102
    for name, hit in (("f", "causal_mask"), ("g", "causal_mask"), ("h", None)):
        results = {"source": _common.source_of(ns[name]), "references": _common.references(ns[name])}
        assert results["source"] is None
        assert _common.forbidden_use(results, {"causal_mask"}) == hit, name


# ------------------------------------------------------------------------ passed and reveal
def test_reveal_waits_for_the_students_own_pass(capsys):
    from attnlab import exercises
    from solutions import l01
    exercises.l01.evaluate_softmax(lambda x: None)
    assert not exercises.passed("l01.softmax")
    exercises.reveal("l01.softmax", "the answer", lang="vi")
    out = capsys.readouterr().out
    assert out == t("ex.reveal_locked", "vi", name=t("l01.ex.softmax", "vi")) + "\n" and "the answer" not in out
    exercises.l01.check_softmax(l01.my_softmax)
    capsys.readouterr()
    assert exercises.passed("l01.softmax") and exercises.passed("l01.ex.softmax")
    exercises.reveal("l01.softmax", "the answer")
    exercises.reveal("l01.softmax", lambda: print("drawn"))
    assert capsys.readouterr().out == "the answer\ndrawn\n"
    exercises.l01.check_softmax(lambda x: x)                                  # a later wrong answer locks again
    assert not exercises.passed("l01.softmax")
    with pytest.raises(ValueError, match="no exercise 'l01.sofmax'"):           # a typo is an error, not "locked"
        exercises.reveal("l01.sofmax", "the answer")


def test_a_todo_template_that_unpacks_the_shapes_first_is_not_done():
    """Some TODO cells unpack the shapes before the TODO (``B, S = src_ids.shape``): still not done
    while the TODO comment and its ``return None`` are there; with the code written, a missing
    ``return`` is a wrong answer."""
    ns = {}
    exec(catalogue.cell("def f(ids):\n    B, S = ids.shape\n    # TODO: the mask\n    return None\n", "todo"), ns)
    exec(catalogue.cell("def g(ids):\n    B, S = ids.shape\n    m = ids != 0\n", "written"), ns)
    assert _common.untouched(ns["f"]) and not _common.untouched(ns["g"])
    assert _common.attempt(ns["f"], torch.zeros(2, 3)) == {"not_done": True}
    assert _common.attempt(ns["g"], torch.zeros(2, 3))["value"] is None


@pytest.mark.parametrize("seed", [2 ** 62 - 1, 2 ** 61 + 12_345])
def test_every_reference_passes_with_a_graders_seed(seed):
    """The grader draws each student's seed from a hash, up to 2**62 (tools/assignments/grade.py:
    _seed): every checker must accept the reference solution there too (lesson 05's block cases once
    seeded torch with seed * 10, an overflow that failed every student's block)."""
    from solutions import targets
    failed = {}
    for key in targets.TARGETS:
        outcome = EXERCISES[targets.registry_key(key)].evaluate(*targets.objects(key), seed=seed)
        if outcome.ok is not True:
            failed[key] = outcome.key
    assert not failed, failed
