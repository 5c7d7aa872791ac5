"""The mutation score of the checkers (docs/checkers.md) is what a run gives, and every survivor is
explained. ``make mutation`` runs mutmut over the reference solutions (solutions/targets.py), with
each exercise's checker as the test, and stores every mutant's status in
solutions/mutation_results.json; this fast test regenerates the mutants with mutmut's own
generator and checks, without running mutmut:

* the stored results cover exactly the mutants of today's reference solutions (a changed
  reference means: run ``make mutation`` again);
* every mutant that survived is listed in solutions/equivalent_mutants.json with its diff and the
  reason it is equivalent, and nothing else is listed there (the list cannot grow unseen: each
  entry is a real survivor, shown in the docs table);
* the table in docs/checkers.md is computed from those two files;
* for a sample (every survivor, and the first and last mutant of each exercise), a fresh run in
  this process, with the mutant switched on, gets the stored status.
"""
from __future__ import annotations

import importlib.util
import json
import linecache
import os
import sys
import types
from pathlib import Path

import pytest

mutmut = pytest.importorskip("mutmut", reason="mutmut (a dev dependency) needs Python 3.10 or newer")

from attnlab.exercises import EXERCISES  # noqa: E402
from solutions import targets  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
RESULTS = json.loads((ROOT / "solutions" / "mutation_results.json").read_text(encoding="utf-8"))
EQUIVALENT = json.loads((ROOT / "solutions" / "equivalent_mutants.json").read_text(encoding="utf-8"))
_spec = importlib.util.spec_from_file_location("mutation_tool", ROOT / "tools" / "mutation.py")
tool = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(tool)


@pytest.fixture(scope="module")
def mutated_modules():
    """solutions.<module> as mutmut rewrites it (every mutant inside, behind its trampoline)."""
    from mutmut.mutation.file_mutation import mutate_file_contents
    here = os.getcwd()
    os.chdir(ROOT)                                       # mutmut reads its configuration from pyproject.toml
    try:
        out = {}
        for module in sorted({m for m, *_ in targets.TARGETS.values()}):
            path = f"solutions/{module}.py"
            out[module] = mutate_file_contents(path, (ROOT / path).read_text(encoding="utf-8"))
        return out
    finally:
        os.chdir(here)


def test_the_stored_results_are_todays_mutants(mutated_modules):
    generated = {f"solutions.{module}.{name}" for module, m in mutated_modules.items() for name in m.mutant_names}
    generated = {name for name in generated if tool.exercise(name) in targets.TARGETS}
    stored = {name for mutants in RESULTS.values() for name in mutants}
    assert set(RESULTS) <= set(targets.TARGETS)
    assert generated == stored, "the reference solutions changed: run `make mutation` again"


def test_every_survivor_is_explained_and_only_survivors_are_listed():
    for key, mutants in RESULTS.items():
        listed = EQUIVALENT.get(key, {})
        for name, entry in mutants.items():
            assert entry["status"] in tool.KILLED + ("survived",), (name, entry)
            if entry["status"] == "survived":
                assert name in listed, f"{name} survived and is not explained"
        for name, why in listed.items():
            assert mutants.get(name, {}).get("status") == "survived", f"{name} is listed but not a survivor"
            assert why["diff"] == mutants[name]["diff"] and len(why["reason"]) > 40, name
    assert set(EQUIVALENT) <= set(RESULTS)


def test_the_docs_table_is_the_stored_results():
    text = (ROOT / "docs" / "checkers.md").read_text(encoding="utf-8")
    start, end = text.index(tool.BEGIN) + len(tool.BEGIN), text.index(tool.END)
    assert text[start:end].strip() == tool.table(RESULTS, EQUIVALENT)


def _sample():
    for key, mutants in sorted(RESULTS.items()):
        names = sorted(mutants, key=lambda n: int(n.rsplit("_", 1)[1]))
        picked = {names[0], names[-1]} | {n for n in names if mutants[n]["status"] == "survived"}
        for name in sorted(picked):
            yield key, name


@pytest.mark.parametrize("key, name", list(_sample()))
def test_a_fresh_run_gets_the_stored_status(key, name, mutated_modules, monkeypatch):
    from mutmut.mutation.trampoline import set_mutant_under_test
    module_name, _, mutant = name.rpartition(".")
    short = module_name.split(".", 1)[1]
    module = types.ModuleType(module_name)
    code, filename = mutated_modules[short].code, f"<mutated {module_name}>"
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)   # the source, as in a file
    exec(compile(code, filename, "exec"), module.__dict__)                            # noqa: S102
    _, names, *_ = targets.TARGETS[key]
    objects = tuple(getattr(module, n) for n in names)
    monkeypatch.setitem(sys.modules, module_name, module)
    try:
        set_mutant_under_test(name)
        accepted = all(EXERCISES[key].evaluate(*objects, seed=s).ok is True for s in targets.SEEDS)
    finally:
        set_mutant_under_test(None)
        os.environ.pop("MUTANT_UNDER_TEST", None)
    assert accepted == (RESULTS[key][name]["status"] == "survived"), (name, RESULTS[key][name])
