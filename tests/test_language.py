"""One term per concept (the glossary) and one typographic style per language, in everything a
student reads: lesson prose, the comments and printed strings of code cells, the package's
message files and the READMEs (the rules: attnlab/data/glossary.json and CONTRIBUTING.md)."""
from __future__ import annotations

import json
import re

import pytest

from attnlab.glossary import CORE, GLOSSARY, avoided_terms, table
from attnlab.languages import COURSE_LANGUAGES
from language_sources import LESSON_DIR, LESSONS_ROOT, ROOT, all_texts, lesson_paths, lesson_texts, prose

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
    ],
    "vi": [
        ("quotes are “…” (no «»)", re.compile(r"[«»]")),
        ("quotes are “…” (no ASCII \" in prose)", re.compile(r'"')),
        ("numbers are written 124.439.808 and 3,9485 (not 1,234)", re.compile(r"(?<![\d.,])[1-9]\d{0,2}(?:,\d{3})+(?![\d,])")),
        ("numbers are written 1,9 triệu (not 1.9M)", re.compile(r"\d\.\d+\s?[KMB]\b")),
        ("decimals are written 3,9485 (not 3.9485)",
         re.compile(r"(?<![\w.,-])(?![1-9]\d{0,2}(?:\.\d{3})+(?![\d.]))\d+\.\d+(?![\w.]|\.\d)(?!\s?[KMB]\b)")),
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
    assert table(lang) in readme, f"{LESSON_DIR[lang]}/README.md: paste attnlab.glossary.table({lang!r})"


def test_rules_catch_the_typical_slips():
    """The rules are not vacuous: each catches the slip it names and lets the right form pass."""
    def slips(text, lang):
        return sorted({rule for rule, _ in _slips(lang, prose(text))})
    assert len(slips('他说「你好」和 "hi there" —— 第 07 课，100 000 个', "zh")) == 5
    assert not slips('请回答 "A" 或 "B"', "zh")                       # short quoted literals are code
    assert slips("用PyTorch写3个", "zh") == ["a half-width space between Chinese and Latin letters or digits"]
    assert not slips("他说“你好”——第 7 课，124,439,808 个，3.9485，`x = \"a\"`，| — |", "zh")
    assert len(slips('«chú ý» và "khóa", 3,700 hàng, 1.9M tham số, 0.125', "vi")) == 5
    assert not slips("“chú ý”, 124.439.808 tham số, 3,9485 và 0,125, 20.000 cặp, từ torch 2.5, torch ≥ 2.5, CC BY-SA 4.0, Chia sẻ tương tự 4.0, SIL Open Font License 1.1, `f\"{n:,}\"`", "vi")
    assert avoided_terms("ba lớp con, một lô, độ lệch", "vi") and not avoided_terms("độ lệch chuẩn, lớp Python", "vi")
    assert avoided_terms("loss 掩码，一批数据，检查器", "zh") and not avoided_terms("损失，随机种子", "zh")
    assert LESSONS_ROOT.is_dir()
