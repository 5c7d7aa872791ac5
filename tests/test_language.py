"""One term per concept (the glossary) and one typographic style per language, in everything a
student reads: lesson prose, the comments and printed strings of code cells, the package's
message files and the READMEs (the rules: attnlab/data/glossary.json and CONTRIBUTING.md)."""
from __future__ import annotations

import json
import re

import pytest

from attnlab.course.glossary import CORE, GLOSSARY, README, avoided_terms, notation_slips, table
from attnlab.course.languages import COURSE_LANGUAGES
from language_sources import (LESSON_DIR, LESSONS_ROOT, ROOT, all_texts, cjk_soft_breaks, latex_spans, lesson_paths,
                              lesson_texts, literal_delimiters, markdown_sources, prose)

LANGS = list(COURSE_LANGUAGES)

# Typography: (rule, pattern) per language; each match in prose or a printed string is an error.
RULES = {
    "zh": [
        ("quotes are “” (no 「」『』)", re.compile(r"[「」『』]")),
        ("quotes are “” (no ASCII \" in prose)", re.compile(r'"')),
        ("the dash is —— without spaces", re.compile(r" ——|—— |(?<!—)(?<!\| )—(?!—)(?! \|)")),
        ("lesson numbers without a leading zero (第 7 课)", re.compile(r"第\s*0\d")),
        ("a half-width space between Chinese and Latin letters or digits",
         re.compile(r"[\u4e00-\u9fff][A-Za-z0-9]|[A-Za-z0-9][\u4e00-\u9fff]")),
        ("numbers are written 124,439,808 (no space groups)", re.compile(r"(?<![\d.,])\d{1,3}(?: \d{3})+(?![\d])")),
        ("exercise headings read “练习 1：…” (not 练习 1——)", re.compile(r"练习 ?\d+ ?——")),
        ("ranges are written 0–4 or 0 到 8 (not Python's 0..4)", re.compile(r"[\w)]\.\.[\w(]")),
    ],
    "vi": [
        ("quotes are “…” (no «»)", re.compile(r"[«»]")),
        ("quotes are “…” (no ASCII \" in prose)", re.compile(r'"')),
        ("numbers are written 124.439.808 and 3,9485 (not 1,234)", re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")),
        ("numbers are written 1,9 triệu (not 1.9M)", re.compile(r"\d\.\d+\s?[KMB]\b")),
        ("decimals are written 3,9485 (not 3.9485)",
         re.compile(r"(?<![\w.,-])(?![1-9]\d{0,2}(?:\.\d{3})+(?![\d.]))\d+\.\d+(?![\w.]|\.\d)(?!\s?[KMB]\b)")),
        ("ranges are written 0–4 (not Python's 0..4)", re.compile(r"[\w)]\.\.[\w(]")),
    ],
}
# Version numbers keep their dot in every language: torch 2.5, Python 3.10, CC BY-SA 4.0.
VERSION = re.compile(r"(torch|python|pytorch|ipython|colab|cuda|numpy|matplotlib|phiên bản|version|by-sa|license|tương tự|v)\b[^.\n]{0,12}$", re.I)


def _slips(lang: str, text: str):
    for rule, pattern in RULES[lang]:
        for m in pattern.finditer(text):
            if rule.startswith("decimals") and VERSION.search(text[max(0, m.start() - 25):m.start()]):
                continue
            yield rule, m


def _report(found: list[str]) -> str:
    return f"{len(found)} problems:\n" + "\n".join(found[:60])


@pytest.mark.parametrize("lang", LANGS)
def test_no_avoided_terms(lang):
    found = [f"{where}: “{wrong}” → “{right}”" for where, text in all_texts(lang, with_comments=True)
             for wrong, right in avoided_terms(text, lang)]
    assert not found, _report(found)


@pytest.mark.parametrize("lang", LANGS)
def test_core_terms_are_used(lang):
    text = "\n".join(t for _, t in lesson_texts(lang, with_comments=True)).lower()
    missing = [GLOSSARY[c][lang] for c in CORE if GLOSSARY[c][lang].lower() not in text]
    assert not missing, f"{lang} lessons never use the glossary terms {missing}"


@pytest.mark.parametrize("lang", LANGS)
def test_typography(lang):
    found = [f"{where}: {rule}: …{text[max(0, m.start() - 25):m.end() + 25]}…".replace("\n", " ")
             for where, text in all_texts(lang) for rule, m in _slips(lang, text)]
    assert not found, _report(found)


def test_vietnamese_titles():
    for path in lesson_paths("vi"):
        nb = json.loads(path.read_text(encoding="utf-8"))
        first = next(c for c in nb["cells"] if c["cell_type"] == "markdown")
        src = "".join(first["source"])
        assert re.match(r"# Bài [1-9]\d*: \S", src), f"{path.name}: the title must read “# Bài N: …”"


@pytest.mark.parametrize("lang", LANGS)
def test_readme_glossary_table(lang):
    readme = (ROOT / LESSON_DIR[lang] / "README.md").read_text(encoding="utf-8")
    assert table(lang) in readme, f"{LESSON_DIR[lang]}/README.md: paste attnlab.course.glossary.table({lang!r})"


def test_readme_glossary_shows_each_language_its_own_rows():
    """One source (glossary.json), two tables: the zh table does not define 平声/仄声 by Vietnamese tones nor
    show house-style notes; the vi table leaves out the Tang-verse terms; hidden rows stay enforced terms."""
    zh, vi = table("zh"), table("vi")
    assert "ngang" not in zh and "Lesson N" not in zh and "lục bát" not in zh and "124M" not in zh
    assert "| 平声 | level tone (a Middle Chinese tone class" in zh and "| 仄声 | oblique tones" in zh
    assert "jueju" not in vi and "Lesson N" not in vi and "| thanh bằng | flat tone (ngang, huyền) |" in vi
    for lang in LANGS:
        assert set(README[lang]["hide"]) <= set(GLOSSARY), lang


def test_drifting_terms_are_caught():
    """The competing terms the teachers found (zh: 参数个数, 小部件, 笔记本, 阈值, 共享嵌入, 位置向量) are caught;
    笔记本电脑 (a laptop) is not."""
    for wrong, right in [("参数个数", "参数量"), ("小部件", "控件"), ("把整本笔记本跑一遍", "notebook"), ("阈值", "门槛"),
                         ("共享嵌入", "权重共享"), ("可学习的位置向量", "位置嵌入")]:
        assert [r for _, r in avoided_terms(wrong, "zh")] == [right], wrong
    assert not avoided_terms("在笔记本电脑的 CPU 上", "zh")
    assert avoided_terms("giá trị mặc định của widget", "vi")


def test_rules_catch_the_typical_slips():
    """The rules are not vacuous: each catches the slip it names and lets the right form pass."""
    def slips(text, lang):
        return sorted({rule for rule, _ in _slips(lang, prose(text))})
    assert len(slips('他说「你好」和 "hi there" —— 第 07 课，100 000 个', "zh")) == 5
    assert not slips('请回答 "A" 或 "B"', "zh")                       # short quoted literals are code
    assert slips("用PyTorch写3个", "zh") == ["a half-width space between Chinese and Latin letters or digits"]
    assert not slips("他说“你好”——第 7 课，124,439,808 个，3.9485，`x = \"a\"`，| — |", "zh")
    assert len(slips('«chú ý» và "khóa", 3,700 hàng, 1.9M tham số, 0.125, vị trí 0..4', "vi")) == 6
    assert len(slips("### 练习 1——掩码，位置 0..S-1", "zh")) == 2 and not slips("### 练习 1：掩码，位置 0–4", "zh")
    assert not slips("“chú ý”, 124.439.808 tham số, 3,9485 và 0,125, 20.000 cặp, từ torch 2.5, torch ≥ 2.5, CC BY-SA 4.0, Chia sẻ tương tự 4.0, SIL Open Font License 1.1, `f\"{n:,}\"`", "vi")
    assert avoided_terms("ba lớp con, một lô, độ lệch", "vi") and not avoided_terms("độ lệch chuẩn, lớp Python", "vi")
    assert avoided_terms("loss 掩码，一批数据，检查器", "zh") and not avoided_terms("损失，随机种子", "zh")
    assert LESSONS_ROOT.is_dir()


# --------------------------------------------------------------------------- notation and rendering
@pytest.mark.parametrize("lang", LANGS)
def test_one_notation_in_the_formulas(lang):
    """$W_Q$ everywhere (not $W_q$, $W^Q$ or $W_i^Q$), $d_{\\text{model}}$: the glossary's NOTATION."""
    found = [f"{path.parent.name}/{path.name} cell {i}: ${wrong}…$ → {right}"
             for path in lesson_paths(lang)
             for i, cell in enumerate(json.loads(path.read_text(encoding="utf-8"))["cells"])
             if cell["cell_type"] == "markdown"
             for latex in latex_spans("".join(cell["source"]))
             for wrong, right in notation_slips(latex)]
    assert not found, _report(found)


def test_emphasis_renders_under_commonmark():
    """No * or _ delimiter that CommonMark (GitHub, JupyterLab, the website) leaves literal: in Chinese,
    **“逐位置”**的 stays literal (a delimiter between full-width punctuation and a CJK character cannot
    open or close emphasis); “**逐位置**”的 renders."""
    found = [f"{where}: …{snippet}…".replace("\n", " ")
             for where, src in markdown_sources() for snippet in literal_delimiters(src)]
    assert not found, _report(found)


def test_no_soft_line_break_between_cjk_characters():
    """A line break inside a Chinese sentence renders as a space (“越南语或 中文”): Chinese paragraphs
    of the READMEs and lessons are one line each, or break after Latin text."""
    found = [f"{where}: {snippet}" for where, src in markdown_sources() for snippet in cjk_soft_breaks(src)]
    assert not found, _report(found)


def test_the_rendering_checks_catch_what_they_name():
    assert literal_delimiters("**“逐位置”**的意思是") and not literal_delimiters("“**逐位置**”的意思是")
    assert literal_delimiters("*许可：*本课") and not literal_delimiters("**许可协议。** 本课")
    assert literal_delimiters("在**第 6 课《GPT》**中") and literal_delimiters("in _x_y")
    assert literal_delimiters("句子*“小猫累了”*里") and literal_delimiters("没有**预热（warm-up）**就很难")
    assert literal_delimiters("**下一课。**本课") and not literal_delimiters("**下一课。** 本课")
    assert literal_delimiters("没有**预热（warm-up）**就很难；**不会变小**；") and not literal_delimiters("没有**预热**（warm-up）就很难；**不会变小**；")
    assert not literal_delimiters("a * b, snake_case, `**kw`, $W_Q * x_i$, **đậm**, *nghiêng*")
    assert not literal_delimiters("| `a` | **b** |\n|---|---|\n| 1 | *c* |")
    assert cjk_soft_breaks("越南语或\n中文") and cjk_soft_breaks("商业，\n目的")
    assert not cjk_soft_breaks("用 PyTorch\n写") and not cjk_soft_breaks("Tiếng\nViệt") and not cjk_soft_breaks("中文\n\n中文")
    assert notation_slips("W_q x + W_{k} + W_i^Q + W^O + d_{model}") and not notation_slips(r"W_Q W_K^\top W_O^{(i)} d_{\text{model}}")
    assert notation_slips(r"\text{inputs}_{b,\,0..t}") and not notation_slips(r"0, \dots, t \ldots")
    assert notation_slips(r"\exp(z_i / T)") and notation_slips(r"T \to 0")          # the temperature is tau
    assert not notation_slips(r"\exp(z_i / \tau), \tau \to 0, QK^T/\sqrt{d_k}, T_{\max} / T_0")
    assert latex_spans("a $W_q$ `$x$` $$y_1$$") == ["$$y_1$$", "$W_q$"]
