"""Every alternative the lessons' prose offers is a tested path: lessons 07 and 08 tell the student
to replace the training cell with ``model = ….load_pretrained(…)``; this test makes exactly that
replacement and runs the whole notebook, requiring every later cell to run without an error (and
without stderr). The replacement is read from the prose, so changing the words changes the test."""
from __future__ import annotations

import json
import pathlib
import re

import nbformat
import pytest
from nbclient import NotebookClient

from attnlab.course import LESSON_DIRS
from attnlab.course.i18n import t

ROOT = pathlib.Path(__file__).resolve().parents[1]
# lesson -> how its training cell is recognised (the one code cell that trains the lesson's model)
TRAINING_CELL = {"07_train_tiny_transformer.ipynb": "reversal.train(model,",
                 "08_number_translator.ipynb": "tr.train(model)"}
OFFER = re.compile(r"`(model = [\w.]+\.load_pretrained\([^`]*\))`")


def _src(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def offered_replacement(nb) -> str:
    """The replacement the prose offers for the training cell (the same snippet everywhere it is offered)."""
    offers = {m.group(1) for c in nb.cells if c.cell_type == "markdown" for m in OFFER.finditer(_src(c))}
    assert len(offers) == 1, f"expected one offered replacement, found {sorted(offers)}"
    return offers.pop()


def training_cell(nb, lesson) -> int:
    found = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and TRAINING_CELL[lesson] in _src(c)]
    assert len(found) == 1, f"{lesson}: expected one training cell, found {found}"
    return found[0]


CASES = [(d, lesson) for lesson in TRAINING_CELL for d in LESSON_DIRS]


@pytest.mark.parametrize("lesson_dir, lesson", CASES, ids=[f"{d}/{n[:2]}" for d, n in CASES])
def test_the_offered_replacement_is_the_same_in_both_languages(lesson_dir, lesson):
    snippets = {offered_replacement(nbformat.read(ROOT / d / lesson, as_version=4)) for d in LESSON_DIRS}
    assert len(snippets) == 1, snippets


@pytest.mark.notebooks              # executes the whole notebook: not in make test-fast
@pytest.mark.parametrize("lesson_dir, lesson", CASES, ids=[f"{d}/{n[:2]}" for d, n in CASES])
def test_every_later_cell_runs_after_the_replacement(lesson_dir, lesson):
    path = ROOT / lesson_dir / lesson
    nb = nbformat.read(path, as_version=4)
    replacement = offered_replacement(nb)
    i = training_cell(nb, lesson)
    nb.cells[i].source = replacement
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    client = NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False,
                            resources={"metadata": {"path": str(path.parent)}})
    client.execute()                                   # raises CellExecutionError on the first failing cell
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in code), "a cell did not run"
    later = [c for c in nb.cells[i + 1:] if c.cell_type == "code"]
    assert later, "no cell after the training cell"
    for c in later:
        for out in c.outputs:
            assert out.output_type != "error", _src(c)[:80]
            assert not (out.output_type == "stream" and out.name == "stderr"), (_src(c)[:80], out.text[:200])
    # the path is really the pretrained one: the training cell's output is gone, the model still passes
    assert not nb.cells[i].outputs
    text = json.dumps([c.outputs for c in later], ensure_ascii=False)
    fail = t("fail", lesson_dir.rsplit("_", 1)[1])
    assert not re.search(re.escape(fail) + "[:：]", text), "a check failed on the pretrained path"
