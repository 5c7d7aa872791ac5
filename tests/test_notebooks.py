"""Notebook hygiene, the shared setup cell and the same program in both languages (the words:\ntest_language.py)."""
from __future__ import annotations

import ast
import json
import pathlib
import re

import pytest

from attnlab.course import LESSON_DIRS, NOTEBOOK_DIRS, SETUP_CELL
from language_sources import all_texts

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = [p for d in NOTEBOOK_DIRS for p in sorted((ROOT / d).glob("*.ipynb"))]
LESSON_NAMES = sorted({p.name for d in LESSON_DIRS for p in (ROOT / d).glob("*.ipynb")})
ALLOWED_TAGS = {"raises-exception", "nbval-ignore-output"}
WIDGET = "application/vnd.jupyter.widget-view+json"
LANG_CELL = re.compile(r'^attnlab\.set_language\("(vi|zh)"\)$')


def load(path: pathlib.Path) -> dict:
    return json.loads(path.read_text(encoding="utf-8"))


def src(cell) -> str:
    s = cell["source"]
    return "".join(s) if isinstance(s, list) else s


def code_cells(nb):
    return [c for c in nb["cells"] if c["cell_type"] == "code"]


def ids(paths):
    return [str(p.relative_to(ROOT)) for p in paths]


def test_there_are_lessons_in_both_languages():
    assert NOTEBOOKS, "no notebooks found"
    for d in LESSON_DIRS:
        assert sorted(p.name for p in (ROOT / d).glob("*.ipynb")) == LESSON_NAMES, f"{d} lacks a lesson"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_setup_cell_is_the_shared_one(path):
    first = code_cells(load(path))[0]
    assert src(first) == SETUP_CELL, f"{path.name}: first code cell differs from attnlab.course.SETUP_CELL; run `make sync`"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=ids(NOTEBOOKS))
def test_hygiene(path):
    nb = load(path)
    assert path.stat().st_size < 1_000_000, "over 1 MB"
    assert "widgets" not in nb["metadata"], "saved widget state in metadata"
    cells = code_cells(nb)
    counts = [c["execution_count"] for c in cells]
    assert counts == list(range(1, len(cells) + 1)), f"not executed top to bottom in one run: {counts}"
    seen_image = False
    for i, c in enumerate(cells):
        tags = set(c.get("metadata", {}).get("tags", []))
        assert tags <= ALLOWED_TAGS, f"code cell {i}: unexpected tags {tags - ALLOWED_TAGS}"
        outs = c["outputs"]
        code_lines = [ln for ln in src(c).splitlines() if ln.strip() and not ln.strip().startswith("#")]
        assert not (code_lines and re.search(r";\s*(#.*)?$", code_lines[-1])), \
            f"code cell {i}: a trailing ';' does not hide output under nbval"
        text = json.dumps(outs, ensure_ascii=False)
        assert not re.search(r"/(home|root|Users|tmp|work)/", text), f"code cell {i}: a machine path in the output"
        assert not re.search(r" at 0x[0-9a-f]{6,}", text), f"code cell {i}: a memory address in the output"
        for o in outs:
            assert not (o["output_type"] == "stream" and o["name"] == "stderr"), f"code cell {i}: stderr output"
            if o["output_type"] == "error":
                assert "raises-exception" in tags, f"code cell {i}: error output without the raises-exception tag"
        has_widget = any(WIDGET in o.get("data", {}) for o in outs)
        has_image = any("image/png" in o.get("data", {}) for o in outs)
        if "raises-exception" in tags:
            assert any(o["output_type"] == "error" for o in outs), f"code cell {i}: tagged raises-exception but no error"
        # Output is ignored only where it is inherently variable: widget cells.
        assert ("nbval-ignore-output" in tags) == has_widget, f"code cell {i}: nbval-ignore-output must tag exactly the widget cells"
        if has_widget:
            assert seen_image, f"code cell {i}: a widget without a static figure above it"
        if has_image:
            seen_image = True
            last = ast.parse(src(c)).body[-1]
            assert isinstance(last, ast.Expr) and ast.unparse(last) == "plt.show()", \
                f"code cell {i}: a plot cell must end with plt.show()"
    assert seen_image, "no static figure in the notebook"


class _MaskWords(ast.NodeTransformer):
    """Every string literal becomes "" and an f-string keeps only its fields: the words may
    differ between the languages, every expression, call, number and format spec may not."""

    def visit_Constant(self, node):
        return ast.Constant("") if isinstance(node.value, str) else node

    def visit_JoinedStr(self, node):
        fields = [self.visit(v) for v in node.values if isinstance(v, ast.FormattedValue)]
        return ast.JoinedStr(fields) if fields else ast.Constant("")

    def visit_FormattedValue(self, node):
        node.value = self.visit(node.value)       # the format spec stays as written
        return node


def normalized_code(cell) -> str:
    """The cell's program with comments, formatting and the words of its string literals removed."""
    return ast.dump(_MaskWords().visit(ast.parse(src(cell))))


def test_parity_masks_words_only():
    a = {"source": 'print(f"Bài {n:,} có {len(xs)} câu", "một")  # vi'}
    b = {"source": 'print(f"第 {n:,} 课{len(xs)}", "一")'}
    assert normalized_code(a) == normalized_code(b)
    for other in ('print(f"{n:.2f} {len(xs)}", "x")', 'print(f"{n:,} {len(ys)}", "x")',
                  'print(f"{n:,} {len(xs)}", "x", 1)', 'print(f"{len(xs)} {n:,}", "x")'):
        assert normalized_code(a) != normalized_code({"source": other}), other


@pytest.mark.parametrize("name", LESSON_NAMES)
def test_same_program_in_both_languages(name):
    vi, zh = (load(ROOT / d / name) for d in LESSON_DIRS)
    assert [c["cell_type"] for c in vi["cells"]] == [c["cell_type"] for c in zh["cells"]], \
        "the two languages have different cell sequences"
    lang_cells = 0
    for i, (a, b) in enumerate(zip(code_cells(vi), code_cells(zh))):
        if LANG_CELL.match(src(a).strip()) and LANG_CELL.match(src(b).strip()):
            assert i == 1, "the language cell must follow the setup cell"
            assert src(a).strip() == 'attnlab.set_language("vi")' and src(b).strip() == 'attnlab.set_language("zh")'
            lang_cells += 1
            continue
        assert normalized_code(a) == normalized_code(b), f"code cell {i} differs between vi and zh:\n{src(a)}\n---\n{src(b)}"
        assert a.get("metadata", {}).get("tags", []) == b.get("metadata", {}).get("tags", []), f"code cell {i}: tags differ"
    assert lang_cells == 1, "expected exactly one language cell"


def test_chinese_lessons_are_simplified():
    traditional = set("頭鍵權編碼層歸輸應這個們於為隨機練習訓練語詞條")  # traditional forms of common course words
    text = "\n".join(t for _, t in all_texts("zh", with_comments=True))
    used = sorted({ch for ch in text if ch in traditional})
    assert not used, f"traditional characters in lessons_zh: {used}"
