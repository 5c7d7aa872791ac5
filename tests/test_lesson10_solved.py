"""Lesson 10 worked through as a student would: every TODO cell replaced by its reference solution
(solutions/catalogue_l10.py, in the lesson's language), the whole notebook run. Every checker then
says ✅, the cell held back by the reveal gate shows the table of heads (the answer) only now, and
no cell fails or writes to stderr. The stored notebook (TODOs untouched) shows none of it."""
from __future__ import annotations

import pathlib

import nbformat
import pytest
from nbclient import NotebookClient

from attnlab.course.i18n import t
from solutions.catalogue_l10 import EXERCISES

pytestmark = pytest.mark.slow
ROOT = pathlib.Path(__file__).resolve().parents[1]
LESSON = "10_poet_gpt.ipynb"


def _src(cell) -> str:
    return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.get("outputs", []) if o.get("output_type") == "stream")


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_the_solved_lesson_passes_every_check_and_reveals_the_answer(lang, tmp_path, monkeypatch):
    monkeypatch.delenv("MPLBACKEND", raising=False)     # the kernel draws inline, as in Jupyter (the matrix sets Agg)
    path = ROOT / f"lessons_{lang}" / LESSON
    nb = nbformat.read(path, as_version=4)
    stored = {i: _text(c) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    locked = t("ex.reveal_locked", lang, name=t("l10.ex.head", lang))
    gate = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and 'reveal("l10.head"' in _src(c)]
    assert len(gate) == 1 and locked in stored[gate[0]]                     # the stored output gives nothing away
    for entry in EXERCISES:
        ref = entry["reference"][lang] if isinstance(entry["reference"], dict) else entry["reference"]
        name = entry["names"][0]
        cells = [i for i, c in enumerate(nb.cells) if c.cell_type == "code" and _src(c).lstrip().startswith(
                 (f"def {name}(", f"{name} = None"))]
        assert len(cells) == 1, (name, cells)
        check = [line for line in _src(nb.cells[cells[0]]).splitlines() if "attnlab.exercises.l10.check_" in line]
        nb.cells[cells[0]].source = ref + "\n\n" + "\n".join(check)
    for cell in nb.cells:
        if cell.cell_type == "code":
            cell.outputs, cell.execution_count = [], None
    NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
                   resources={"metadata": {"path": str(path.parent)}}).execute()
    outs = {i: _text(c) for i, c in enumerate(nb.cells) if c.cell_type == "code"}
    for cell in nb.cells:
        for o in cell.get("outputs", []):
            assert not (o.get("output_type") == "stream" and o.get("name") == "stderr"), o.get("text")
    assert sum("✅" in text for text in outs.values()) == 5, outs          # four graded exercises and the guess
    assert not any("❌" in text or "⏳" in text for text in outs.values()), [x for x in outs.values() if "❌" in x or "⏳" in x]
    revealed = nb.cells[gate[0]]
    assert locked not in outs[gate[0]]
    assert any("image/png" in o.get("data", {}) for o in revealed.outputs)  # the annotated table of heads
