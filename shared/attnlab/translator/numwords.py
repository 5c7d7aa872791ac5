"""Numbers 0..99 999 written in Vietnamese or Chinese words, with the source digit of every word.

``words(105, "vi")`` -> ``NumWords(number=105, digits=['1', '0', '5'],
tokens=['một', 'trăm', 'linh', 'năm'], align=[0, 0, 1, 2])``.

The source is the number's decimal digits, most significant first, no leading zeros
(``digits``); position 0 is the leftmost digit. Every target token records in ``align`` the
source position it comes from — the attention target used to score cross-attention:

- a digit word (``năm``, ``五``, also ``mốt``/``lăm``/``tư``, ``两``) -> the digit it spells;
- a unit word (``mươi``/``mười``, ``trăm``, ``nghìn``; ``十 百 千 万``) -> the digit it multiplies
  (``mười`` and a bare ``十`` spell the tens digit 1 and multiply it at once);
- a zero word (``không`` in ``không trăm``, ``linh``; ``零``) -> the zero digit it stands for
  (the first zero of a run for ``零``).

Some words need more than their aligned digit: ``mốt``/``lăm``/``tư`` exist only after a tens
digit ≥ 2 (``mười lăm``: ≥ 1 for ``lăm``), ``linh`` and ``零`` only before a later non-zero
digit, ``二``/``两`` depend on the unit that follows and on whether the digit leads the
number. ``context_digits`` lists, for each token, every source position that decides its form.

Choices (documented; the tests check them against hand-verified tables):

Vietnamese — the northern standard (Hanoi):
  * ``linh`` for a zero tens digit before a non-zero unit: 105 = ``một trăm linh năm``
    (southern: ``lẻ``, ``một trăm lẻ năm``); thousands ``nghìn`` (southern: ``ngàn``).
  * ``mười`` = 10..19, ``mươi`` after a tens digit 2..9: 15 = ``mười lăm``, 50 = ``năm mươi``.
  * unit 1 after ``mươi`` is ``mốt`` (21 = ``hai mươi mốt``), but ``mười một`` (11) and
    ``linh một`` (101).
  * unit 5 after ``mười``/``mươi`` is ``lăm`` (15, 25; the colloquial ``nhăm`` is not used), but
    ``linh năm`` (105) and ``năm`` alone.
  * unit 4 after ``mươi`` is ``tư`` (24 = ``hai mươi tư``, the usual northern form; ``hai mươi bốn``
    is also correct), but ``mười bốn`` (14) and ``linh bốn`` (104).
  * inside a number, a zero hundreds digit is read ``không trăm`` when something follows it:
    1 005 = ``một nghìn không trăm linh năm``, 1 050 = ``một nghìn không trăm năm mươi``;
    2 000 = ``hai nghìn``.
  * thousands are read as a number of 1..99 before ``nghìn``: 21 000 = ``hai mươi mốt nghìn``.

Chinese — the standard written form of 《现代汉语词典》 (entry 两 and its usage note
  on 两/二) and of the primary-school textbooks (二百四十五):
  * ``两`` only for a LEADING digit 2 before ``千`` or ``万``: 两千, 两万, 两万二千; everywhere else
    ``二``: 二百, 二百二十二, 一千二百, 一万二千, 两万二千二百二十二, 二十二, 一百零二. (The colloquial
    两百 / 一千两百 is also heard; the course writes the dictionary's form.) So the form of a 2 depends
    on the place value of that digit and on whether it leads the number — both read off the source
    digits, never off the words written before it.
  * ``十`` alone for 10..19 at the start of a number (十五), ``一十`` after a higher unit
    (一百一十五, 一千零一十, 一万零一十).
  * one ``零`` for each run of zeros between non-zero digits (1 005 = 一千零五, 10 010 =
    一万零一十), none at the end (1 200 = 一千二百, 10 000 = 一万).
  * ``万`` = 10 000; the range stops at 99 999 = 九万九千九百九十九.
"""
from __future__ import annotations

from typing import NamedTuple

MAX_NUMBER = 99_999

VI_DIGITS = ("không", "một", "hai", "ba", "bốn", "năm", "sáu", "bảy", "tám", "chín")
ZH_DIGITS = ("零", "一", "二", "三", "四", "五", "六", "七", "八", "九")
ZH_UNITS = {1: "十", 2: "百", 3: "千", 4: "万"}          # power of ten -> unit

# Every word each language can produce (the decoder's vocabulary, in a fixed order).
VOCAB = {
    "vi": VI_DIGITS + ("mười", "mươi", "trăm", "nghìn", "linh", "mốt", "lăm", "tư"),
    "zh": ZH_DIGITS + ("两", "十", "百", "千", "万"),
}
LANGUAGES = tuple(VOCAB)      # the languages with number words (every course language: tests/test_numwords.py)


class NumWords(NamedTuple):
    number: int
    digits: list[str]            # source tokens, most significant first
    tokens: list[str]            # target words
    align: list[int]             # per token: the source position it comes from
    context_digits: list[tuple[int, ...]]   # per token: every source position that decides its form


def _check(number, lang: str) -> None:
    if isinstance(number, bool) or not isinstance(number, int):
        raise TypeError(f"number must be an int, got {type(number).__name__}")
    if not 0 <= number <= MAX_NUMBER:
        raise ValueError(f"number must be in 0..{MAX_NUMBER}, got {number}")
    if lang not in LANGUAGES:
        raise ValueError(f"lang must be one of {LANGUAGES}, got {lang!r}")


def words(number: int, lang: str) -> NumWords:
    """``number`` (0..99 999) in words of ``lang`` ("vi" or "zh"), with the alignment of every word."""
    _check(number, lang)
    digits = list(str(number))
    out: list[tuple[str, int, tuple[int, ...]]] = []
    (_vi if lang == "vi" else _zh)([int(d) for d in digits], out)
    return NumWords(number, digits, [w for w, _, _ in out], [a for _, a, _ in out], [c for _, _, c in out])


def to_words(number: int, lang: str) -> str:
    """The words joined: with spaces in Vietnamese, without in Chinese."""
    w = words(number, lang)
    return (" " if lang == "vi" else "").join(w.tokens)


# ----------------------------------------------------------------------------- Vietnamese
def _vi_below_100(d: list[int], pos: list[int], out, first: bool) -> None:
    """Two digits (tens d[0] at source position pos[0], units d[1] at pos[1]).

    ``first``: these are the leading digits of the whole number (no ``linh`` before a lone unit).
    """
    (t, u), (pt, pu) = d, pos
    if t == 0:
        if u == 0:
            return
        if not first:
            out.append(("linh", pt, (pt, pu)))
        out.append((VI_DIGITS[u], pu, (pu,)))
        return
    if t == 1:
        out.append(("mười", pt, (pt,)))
        if u == 5:
            out.append(("lăm", pu, (pt, pu)))
        elif u:
            out.append((VI_DIGITS[u], pu, (pt, pu)))
        return
    out.append((VI_DIGITS[t], pt, (pt,)))
    out.append(("mươi", pt, (pt,)))
    if u:
        word = {1: "mốt", 4: "tư", 5: "lăm"}.get(u, VI_DIGITS[u])
        out.append((word, pu, (pt, pu)))


def _vi_below_1000(d: list[int], pos: list[int], out, first: bool) -> None:
    """Up to three digits; ``first``: they lead the number (no ``không trăm``)."""
    if len(d) < 3:
        d, pos = [0] * (2 - len(d)) + d, [pos[0]] * (2 - len(pos)) + pos
        _vi_below_100(d, pos, out, first=True)
        return
    h = d[0]
    if h or not first:
        if h == 0 and d[1] == 0 and d[2] == 0:
            return                                         # 2 000: nothing after "nghìn"
        out.append((VI_DIGITS[h], pos[0], (pos[0],)))
        out.append(("trăm", pos[0], (pos[0],)))
    _vi_below_100(d[1:], pos[1:], out, first=False)


def _vi(d: list[int], out) -> None:
    n = len(d)
    if n == 1 and d[0] == 0:
        out.append(("không", 0, (0,)))
        return
    if n <= 3:
        _vi_below_1000(d, list(range(n)), out, first=True)
        return
    k = n - 3                                              # digits of the thousands group
    _vi_below_1000(d[:k], list(range(k)), out, first=True)
    out.append(("nghìn", k - 1, (k - 1,)))
    _vi_below_1000(d[k:], list(range(k, n)), out, first=False)


# ----------------------------------------------------------------------------- Chinese
def _zh(d: list[int], out) -> None:
    n = len(d)
    if n == 1 and d[0] == 0:
        out.append(("零", 0, (0,)))
        return
    zero_run = None                                        # first position of a pending run of zeros
    for i, digit in enumerate(d):
        power = n - 1 - i
        if digit == 0:
            if zero_run is None:
                zero_run = i
            continue
        if zero_run is not None:                           # zeros between non-zero digits: one 零
            out.append(("零", zero_run, tuple(range(zero_run, i + 1))))
            zero_run = None
        if power == 1 and digit == 1 and i == 0:
            out.append(("十", i, (i,)))                     # 十五: the leading 1 of 10..19 is silent
            continue
        if digit == 2 and i == 0 and power >= 3:
            out.append(("两", i, (i,)))                     # 两千, 两万: a leading 2 before 千/万 only
        else:
            out.append((ZH_DIGITS[digit], i, (i,)))
        if power:
            out.append((ZH_UNITS[power], i, (i,)))
