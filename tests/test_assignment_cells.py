"""How the assignment builder reads a lesson (tools/assignments/lesson_cells.py): fast, no nbgrader."""
from __future__ import annotations

import importlib
from pathlib import Path

import nbformat
import pytest

from tools.assignments.build import hidden_test, source_notebook
from tools.assignments.lesson_cells import LessonError, read_lesson

ROOT = Path(__file__).resolve().parents[1]
SETUP = "import attnlab\nattnlab.setup_notebook()"


def notebook(*codes: str):
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title")] + [nbformat.v4.new_code_cell(c) for c in codes]
    return nb


@pytest.mark.parametrize("lang", ["vi", "zh"])
def test_lesson_01_exercises_and_their_unprinted_twins(lang):
    nb = nbformat.read(ROOT / f"lessons_{lang}" / "01_self_attention.ipynb", as_version=4)
    lesson = read_lesson(nb, "01_self_attention")
    assert [e.key for e in lesson.exercises] == ["l01.softmax", "l01.attention", "l01.dot_std"]
    for ex in lesson.exercises:
        module = importlib.import_module(f"attnlab.exercises.{ex.module}")
        assert getattr(module, ex.evaluate) is getattr(module, ex.check).evaluate
        assert "TODO" in ex.answer and ex.check not in ex.answer
        assert ex.markdown and ex.markdown[0].cell_type == "markdown"
    assert lesson.exercises[0].markdown[0].source.startswith("## ")
    assert "import torch" in lesson.context and 'set_language("' in lesson.language


def test_lessons_07_and_08_load_the_checkpoint_instead_of_training():
    for stem, line in (("07_train_tiny_transformer", "model = reversal.load_pretrained()"),
                       ("08_number_translator", "model = tr.load_pretrained(LANG)")):
        nb = nbformat.read(ROOT / "lessons_vi" / f"{stem}.ipynb", as_version=4)
        context = read_lesson(nb, stem).context
        assert context.rstrip().endswith(line) and "train(" not in context
    assert "LANG = attnlab.get_language()" in context          # picked because the checkpoint line reads it


def test_hidden_test_calls_the_lessons_checker():
    nb = notebook(SETUP, 'attnlab.set_language("vi")',
                  "def f(x):\n    return None  # TODO\n\nattnlab.exercises.l01.check_softmax(f)")
    ex = read_lesson(nb, "demo").exercises[0]
    assert hidden_test(ex).splitlines()[0] == "attnlab.exercises.l01.check_softmax(f)"
    assert "assert attnlab.exercises.l01.evaluate_softmax(f).ok" in hidden_test(ex)
    built = source_notebook(read_lesson(nb, "demo"), nb, "vi")
    kinds = [(c.metadata.get("nbgrader", {}).get("grade_id"), c.metadata.get("nbgrader", {}).get("grade"))
             for c in built.cells if c.cell_type == "code"]
    assert kinds == [("setup", False), ("language", False), ("context", False),
                     ("l01-softmax-answer", False), ("l01-softmax", True)]


@pytest.mark.parametrize("codes, words", [
    (("print(1)", 'attnlab.set_language("vi")'), "setup cell"),
    ((SETUP, 'attnlab.set_language("vi")', "x = 1"), "no exercise cell"),
    ((SETUP, 'attnlab.set_language("vi")', "attnlab.exercises.l01.check_softmax(f)\nprint(2)"), "must end"),
    ((SETUP, 'attnlab.set_language("vi")', "attnlab.exercises.l01.check_softmax(unknown_model)"), "`unknown_model`"),
])
def test_a_lesson_of_another_shape_gets_a_clear_error(codes, words):
    with pytest.raises(LessonError, match=words.replace("(", r"\(")):
        read_lesson(notebook(*codes), "demo")


def test_code_between_exercises_is_kept_only_where_an_exercise_reads_it():
    nb = notebook(SETUP, 'attnlab.set_language("vi")', "import torch\nx = torch.ones(2)",
                  "def f(x):\n    return None  # TODO\n\nattnlab.exercises.l01.check_softmax(f)",
                  "y = x * 2\nplot = y.sum()\nprint(plot)",                       # y read below, plot not
                  "def helper(t):\n    return t + y\n\n\nunused = helper(x)",
                  "my_guess = None  # TODO", "low = helper(x)\nattnlab.exercises.l10.check_guess(my_guess, low, 0.5)")
    lesson = read_lesson(nb, "demo")
    assert "y = x * 2" in lesson.context and "def helper" in lesson.context and "x = torch.ones(2)" in lesson.context
    assert "plot" not in lesson.context and "unused" not in lesson.context and "print" not in lesson.context
    guess = lesson.exercises[1]
    assert guess.answer == "my_guess = None  # TODO" and guess.prelude == "low = helper(x)" and not guess.graded
    built = source_notebook(lesson, nb, "vi")
    cell = next(c for c in built.cells if c.metadata.get("nbgrader", {}).get("grade_id") == "l10-guess")
    assert cell.source == "low = helper(x)\nattnlab.exercises.l10.check_guess(my_guess, low, 0.5)"
    assert not cell.metadata["nbgrader"]["grade"] and cell.metadata["nbgrader"]["locked"]


def test_a_name_is_taken_from_its_last_definition_before_the_exercise():
    nb = notebook(SETUP, 'attnlab.set_language("vi")', "n = 1",
                  "def f(x):\n    return None  # TODO\n\nattnlab.exercises.l01.check_softmax(f, n)", "n = 2")
    assert "n = 1" in read_lesson(nb, "demo").context and "n = 2" not in read_lesson(nb, "demo").context


def test_lesson_10_loads_the_checkpoint_and_keeps_the_guess_ungraded():
    nb = nbformat.read(ROOT / "lessons_zh" / "10_poet_gpt.ipynb", as_version=4)
    lesson = read_lesson(nb, "10_poet_gpt")
    assert lesson.context.rstrip().endswith("model = poet.load_pretrained(LANG)") and "poet.train(" not in lesson.context
    assert [(e.key, e.graded) for e in lesson.exercises] == [       # in the lesson's order: ex. 3 sits in §6
        ("l10.head", True), ("l10.probs", True), ("l10.units", True), ("l10.guess", False)]
