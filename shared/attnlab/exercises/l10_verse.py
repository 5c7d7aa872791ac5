"""Lesson 10's exercises on the verse itself (re-exported by ``l10``):

- ``check_pattern(fn, lang)``: ``fn(line) -> list``: the tone class of each unit of a verse line:
  vi "B" / "T" from the diacritics; zh "平" / "仄" / "两读" from the 平水韵 groups (None for a
  character the table lacks). ``form.tone_class`` and the package's tone functions are forbidden.
- ``check_rhymes(fn, lang)``: ``fn(a, b) -> bool``: vi, is it a vần chính (both bằng, the same rime
  once the tone, the onset and the medial are gone); zh, do the two characters share a 平声 group.

Probe: the student's function on lines / pairs drawn from the seed (the corpus, and cases built to
catch the typical mistakes). Judge: the same cases again, the package's answer, the mistake named.
"""
from __future__ import annotations

import functools
import unicodedata

from ..poet import corpus, forms, jinti, luc_bat
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, evaluate_exercise, forbidden_use, judging, kind,
                      printing, references, source_of, value_of)

LANGS = ("vi", "zh")
FORBIDDEN = {"pattern": frozenset({"tone_class", "tone", "is_flat"}),
             "rhymes": frozenset({"rhymes", "rhyme_name", "rhyme_kind", "rhyme_key", "rime", "rime_parts",
                                  "level_groups"})}


def _lang_of(results: dict) -> str:
    lang = results.get("lang")
    if lang not in LANGS:
        raise Verdict(False, "ex.no_result")
    return lang


def _forbidden(results: dict, which: str) -> None:
    name = forbidden_use(results, FORBIDDEN[which])
    if name:
        raise Verdict(False, "l10.hint.forbidden", name=name)


@functools.lru_cache(maxsize=2)
def _lines(lang: str) -> tuple[str, ...]:
    return tuple(line for line in corpus.read_text(lang).splitlines() if line)


# --------------------------------------------------------------------------- pattern
VI_LINES = ["Ngã ba hỏi ngõ, sắc nặng huyền ngang,",              # every tone, in words that say them
            "ÂU ƠI ĂN ỐC ỞỞ ẤY,", "Ơ hay ô kìa ư ừ,"]             # vowel marks are not tones
ZH_EXTRA = ["翠涛过玉䪥。", "谤书未及明君𦶟，",                     # Han characters outside U+4E00..9FFF
            "看花还上望乡台，", "白日啼猿不可闻？", "春眠，不觉晓！"]     # 两读, a missing character, ？！


def _pattern_cases(seed: int, lang: str) -> list[str]:
    d = Draw(seed, f"l10.pattern.{lang}")
    picked = d.sample(_lines(lang), 5)
    if lang == "vi":
        nfd = unicodedata.normalize("NFD", d.choice(_lines("vi")))
        spaced = "  " + d.choice(_lines("vi")).replace(" ", "  ").replace(",", " ...") + " "
        return picked + VI_LINES + [nfd, spaced]
    return picked + ZH_EXTRA


def probe_pattern(fn, lang, *, seed: int) -> dict:
    results = {"lang": lang if lang in LANGS else None, "source": source_of(fn), "references": references(fn)}
    if lang not in LANGS:
        return results
    for i, line in enumerate(_pattern_cases(seed, lang)):
        results[f"case{i}"] = outcome = attempt(fn, line)
        if "value" not in outcome or outcome["value"] is None:
            break
    return results


def _vi_variants() -> dict:
    """The typical mistakes, as tone-class functions of one syllable (the hint key -> function)."""
    def marks(s):
        return [c for c in unicodedata.normalize("NFD", s) if unicodedata.combining(c)]
    return {
        "l10.hint.huyen": lambda s: "B" if luc_bat.tone(s) == "ngang" else "T",
        "l10.hint.oblique_tones": lambda s: "T" if luc_bat.tone(s) in ("sac", "nang") else "B",
        "l10.hint.vowel_marks": lambda s: "T" if any(m != "\u0300" for m in marks(s)) else "B",
    }


def _zh_variants() -> dict:
    def cls(groups, level):
        kinds = {level(g) for g in groups}
        return None if not kinds else ("平" if kinds == {True} else "仄" if kinds == {False} else "两读")
    plain = lambda g: "平声" in g  # noqa: E731
    return {
        "l10.hint.shangping": lambda c: cls(jinti.groups(c), lambda g: plain(g) and not g.startswith("上")),
        "l10.hint.rusheng": lambda c: cls(jinti.groups(c), lambda g: plain(g) or g.startswith("入")),
        "l10.hint.either": lambda c: (None if not jinti.groups(c) else
                                      "平" if plain(jinti.groups(c)[0]) else "仄"),
    }


def _pattern_problem(lang: str, line: str, got, every_case: list) -> tuple[str, dict] | None:
    form = forms.form(lang)
    units = form.units(line)
    want = [form.tone_class(u) for u in units]
    fields = {"line": line.strip()}
    if isinstance(got, str):
        return "l10.hint.pattern_string", fields
    if not isinstance(got, (list, tuple)) or not all(v is None or isinstance(v, str) for v in got):
        return "l10.hint.pattern_type", {"got": kind(got)}
    got = [v.strip() if isinstance(v, str) else v for v in got]
    if got == want:
        return None
    if len(got) != len(want):
        wide = [u for u in units if ord(u[0]) > 0x9FFF or ord(u[0]) < 0x4E00] if lang == "zh" else []
        if wide and len(got) == len(want) - len(wide):
            return "l10.hint.cjk_range", {**fields, "char": wide[0]}
        return "l10.hint.pattern_length", {**fields, "got": len(got), "want": len(want)}
    labels = {"B", "T"} if lang == "vi" else {"平", "仄", "两读", None}
    if not set(got) <= labels:
        return "l10.hint.pattern_labels", {**fields, "got": next(str(v) for v in got if v not in labels)}
    if lang == "vi":
        if line != unicodedata.normalize("NFC", line):
            return "l10.hint.nfd", fields
        for key, variant in _vi_variants().items():
            if got == [variant(u) for u in units]:
                return key, fields
    else:
        for i, (g, w) in enumerate(zip(got, want)):
            if w is None and g is not None:
                return "l10.hint.missing_char", {**fields, "char": units[i]}
        for key, variant in _zh_variants().items():
            if got == [variant(u) for u in units]:
                return key, fields
    i = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
    return "l10.hint.pattern_values", {**fields, "unit": units[i], "got": str(got[i])}


@judging
def judge_pattern(results: dict, *, seed: int):
    lang = _lang_of(results)
    _forbidden(results, "pattern")
    cases = _pattern_cases(seed, lang)
    for i, line in enumerate(cases):
        got = value_of(results, f"case{i}")
        problem = _pattern_problem(lang, line, got, cases)
        if problem:
            return (False, *problem)
    return True, {"vi": "l10.ok.pattern.vi", "zh": "l10.ok.pattern.zh"}[lang], {}


PATTERN = Exercise("l10.pattern", "l10.ex.pattern", ("my_pattern",), probe_pattern, judge_pattern,
                   args=("my_pattern", "LANG"))


def evaluate_pattern(fn, corpus_lang: str, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(line) -> list``: the tone classes of the units of a line of the corpus ``corpus_lang``."""
    return evaluate_exercise(PATTERN, (fn, corpus_lang), lang, seed)

check_pattern = printing(evaluate_pattern)


# --------------------------------------------------------------------------- rhymes
# (a, b, the mistake that would get it wrong): each pair's answer is the package's.
VI_PAIRS = [("hoa", "ca", "l10.hint.medial"), ("qua", "xa", "l10.hint.medial"), ("hoàng", "sang", "l10.hint.medial"),
            ("thuyền", "tiền", "l10.hint.medial"), ("khoe", "xe", "l10.hint.medial"), ("hoằng", "bằng", "l10.hint.medial"),
            ("thuê", "về", "l10.hint.medial"), ("tuần", "cân", "l10.hint.medial"), ("huơ", "thơ", "l10.hint.medial"),
            ("ta", "lá", "l10.hint.tone_ignored"),
            ("mạ", "ta", "l10.hint.tone_ignored"), ("nhau", "dâu", "l10.hint.thong"), ("lòng", "hồng", "l10.hint.thong"),
            ("gìn", "tin", "l10.hint.gi_qu"), ("già", "ca", "l10.hint.gi_qu"), ("quê", "về", "l10.hint.gi_qu"),
            ("gì", "khi", "l10.hint.gi_qu"), ("khuya", "kia", "l10.hint.y_i"), ("yên", "tiên", "l10.hint.y_i"),
            ("quy", "khi", "l10.hint.y_i"), ("ta", "là", "l10.hint.onset"), ("người", "mười", "l10.hint.onset")]
ZH_PAIRS = [("斜", "家", None), ("花", "山", None), ("白", "白", "l10.hint.ze_groups"), ("月", "雪", "l10.hint.ze_groups"),
            ("看", "寒", None), ("干", "先", "l10.hint.first_group"), ("看", "汉", "l10.hint.ze_groups"), ("为", "时", None),
            ("啼", "西", "l10.hint.rhyme_missing"), ("中", "风", None)]


@functools.lru_cache(maxsize=2)
def _rhyme_pairs(lang: str) -> tuple[tuple[str, str], ...]:
    """The rhyme positions of the corpus: vi, vần lưng; zh, consecutive even lines."""
    f = forms.form(lang)
    if lang == "vi":
        lines = [f.units(line) for line in _lines("vi")]
        return tuple((lines[i][5], lines[i + 1][5]) for i in range(0, len(lines) - 1, 2))
    return tuple((a, b) for poem in corpus.poems("zh") for _, a, b in f.rhyme_pairs(poem))


def _rhymes_cases(seed: int, lang: str) -> list[tuple[str, str, str | None]]:
    d = Draw(seed, f"l10.rhymes.{lang}")
    real = d.sample(_rhyme_pairs(lang), 6)
    mixed = list(zip(d.sample([a for a, _ in _rhyme_pairs(lang)], 4), d.sample([b for _, b in _rhyme_pairs(lang)], 4)))
    fixed = VI_PAIRS if lang == "vi" else ZH_PAIRS
    order = d.perm(len(fixed))
    return [(a.lower(), b.lower(), None) for a, b in real + mixed] + [fixed[i] for i in order]


def _answer(lang: str, a: str, b: str) -> bool:
    return luc_bat.rhyme_kind(a, b) == "chinh" if lang == "vi" else jinti.rhymes(a, b)


def probe_rhymes(fn, lang, *, seed: int) -> dict:
    results = {"lang": lang if lang in LANGS else None, "source": source_of(fn), "references": references(fn)}
    if lang not in LANGS:
        return results
    for i, (a, b, _) in enumerate(_rhymes_cases(seed, lang)):
        results[f"case{i}"] = outcome = attempt(fn, a, b)
        if "value" not in outcome or outcome["value"] is None:
            break
    return results


@judging
def judge_rhymes(results: dict, *, seed: int):
    lang = _lang_of(results)
    _forbidden(results, "rhymes")
    wrong = []
    for i, (a, b, trap) in enumerate(_rhymes_cases(seed, lang)):
        got = value_of(results, f"case{i}")
        if not isinstance(got, bool):
            return False, "l10.hint.rhymes_type", {"got": kind(got)}
        if got != _answer(lang, a, b):
            wrong.append((trap, a, b, got))
    if not wrong:
        return True, {"vi": "l10.ok.rhymes.vi", "zh": "l10.ok.rhymes.zh"}[lang], {}
    trap, a, b, got = _likeliest(wrong)
    return False, trap or "l10.hint.rhymes_values", {"a": a, "b": b, "got": got}


def _likeliest(wrong: list[tuple]) -> tuple:
    """The wrong pair that names the mistake best: a wrong onset pair first (if ta – là fails, the
    onset was never removed); else the kind of pair most of the wrong ones are (a trap's hint, or
    plain pairs of the corpus: the general hint); ties go to a trap, the first listed."""
    onset = [w for w in wrong if w[0] == "l10.hint.onset"]
    if onset:
        return onset[0]
    keys = [w[0] for w in wrong]
    order = [t for _, _, t in VI_PAIRS + ZH_PAIRS]
    best = max(set(keys), key=lambda k: (keys.count(k), k is not None, -order.index(k) if k else 0))
    return next(w for w in wrong if w[0] == best)


RHYMES = Exercise("l10.rhymes", "l10.ex.rhymes", ("my_rhymes",), probe_rhymes, judge_rhymes,
                  args=("my_rhymes", "LANG"))


def evaluate_rhymes(fn, corpus_lang: str, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(a, b) -> bool``: vi, a vần chính; zh, a shared 平声 group."""
    return evaluate_exercise(RHYMES, (fn, corpus_lang), lang, seed)

check_rhymes = printing(evaluate_rhymes)
