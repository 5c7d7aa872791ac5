"""The Vietnamese side of the verse measures: tones, rimes and the rules of lục bát.

A syllable (tiếng) is an onset (phụ âm đầu), a rime (vần) and a tone (thanh), as Vietnamese
school grammar teaches; the rime is a medial (âm đệm: the o of "hoa", the u of "quê"), a nucleus
(âm chính) and a coda (âm cuối).

Tones come from the diacritics: decompose (NFD) and look for one of the five tone marks (the
vowel marks ^ ˘ ' of â ă ê ô ơ ư are not tones). Thanh bằng: ngang (no mark) and huyền; thanh
trắc: sắc, hỏi, ngã, nặng.

Lục bát, per couplet (câu lục of 6 syllables, câu bát of 8):

    luật bằng trắc  câu lục: syllables 2, 4, 6 are B, T, B; câu bát: 2, 4, 6, 8 are B, T, B, B,
                    and its 6th and 8th differ in tone (one ngang, one huyền)
    vần lưng        the 6th of the câu bát rhymes with the 6th (last) of the câu lục
    vần chân        the 8th of the câu bát rhymes with the 6th of the next câu lục

Rhyme (``rhyme_kind``). Both syllables must be bằng. The onset and the medial do not count
(qua – xa, hoa – ca rhyme). **Vần chính**: the same nucleus and the same coda. **Vần thông**:
nuclei of the same row of the vowel chart (front: i ê e iê; back unrounded: ư ơ â a ă ươ; back
rounded: u ô o uô), the same coda (ng and nh, c and ch counted as one coda each): au – âu,
ong – ông – ung, ơi – ươi, in – en, inh – anh (the a of anh is a front vowel). This is the rule
this package measures with; a poet may judge some pairs it accepts as weak.
"""
from __future__ import annotations

import functools
import unicodedata
from typing import NamedTuple

TONE_MARKS = {"\u0300": "huyen", "\u0301": "sac", "\u0303": "nga", "\u0309": "hoi", "\u0323": "nang"}
FLAT_TONES = ("ngang", "huyen")                 # thanh bằng
FLAT, OBLIQUE = "B", "T"                        # bằng, trắc
ONSETS = ("ngh", "ng", "nh", "ch", "gh", "gi", "kh", "ph", "th", "tr", "qu",
          "b", "c", "d", "đ", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "x")
VOWELS = set("aăâeêioôơuưy")
CODAS = {"": "", "c": "c", "ch": "c", "m": "m", "n": "n", "ng": "ng", "nh": "ng", "p": "p", "t": "t",
         "i": "i", "y": "i", "o": "u", "u": "u"}
ROWS = {"i": "front", "ê": "front", "e": "front", "iê": "front",
        "ư": "back", "ơ": "back", "â": "back", "a": "back", "ă": "back", "ươ": "back",
        "u": "round", "ô": "round", "o": "round", "uô": "round", "oo": "round"}
# Luật bằng trắc: position (from 1) -> the class it must have.
RULE_SIX = {2: FLAT, 4: OBLIQUE, 6: FLAT}
RULE_EIGHT = {2: FLAT, 4: OBLIQUE, 6: FLAT, 8: FLAT}


def _bare(syllable: str) -> str:
    """Lower case, NFC, without tone marks (the vowel marks stay) and without anything but letters."""
    decomposed = unicodedata.normalize("NFD", syllable.lower())
    kept = "".join(c for c in decomposed if c not in TONE_MARKS)
    return "".join(c for c in unicodedata.normalize("NFC", kept) if c.isalpha())


def tone(syllable: str) -> str:
    """ngang, huyen, sac, hoi, nga or nang, from the syllable's diacritics (any normalisation)."""
    marks = [TONE_MARKS[c] for c in unicodedata.normalize("NFD", syllable) if c in TONE_MARKS]
    return marks[0] if marks else "ngang"


def tone_class(syllable: str) -> str:
    """'B' (thanh bằng: ngang, huyền) or 'T' (thanh trắc: sắc, hỏi, ngã, nặng)."""
    return FLAT if tone(syllable) in FLAT_TONES else OBLIQUE


def is_flat(syllable: str) -> bool:
    return tone(syllable) in FLAT_TONES


def _onset(bare: str) -> tuple[str, str]:
    """(onset, the rest). "gi" is an onset before a vowel (gia, giữa) and in gì, gìn; "qu" always."""
    if bare.startswith("gi") and (len(bare) == 2 or bare[2] not in VOWELS):
        return "gi", bare[1:]                        # gì, gìn: the i belongs to the rime
    for onset in ONSETS:
        if bare.startswith(onset) and len(bare) > len(onset):
            return onset, bare[len(onset):]
    return "", bare


def rime(syllable: str) -> str:
    """The rime (vần) as school grammar has it: the syllable without its tone and its onset, lower
    case: 'Nhàn' -> 'an', 'quên' -> 'ên', 'gìn' -> 'in', 'gì' -> 'i', 'giữa' -> 'ưa', 'hoa' -> 'oa'."""
    return _onset(_bare(syllable))[1]


class Rime(NamedTuple):
    medial: str          # "", "o" or "u"
    nucleus: str         # a ă â e ê i o ô ơ u ư, or the diphthongs iê uô ươ (however spelt), oo
    coda: str            # "", c m n ng p t i u (ch counted as c, nh as ng, y as i, o as u)


@functools.lru_cache(maxsize=None)
def rime_parts(syllable: str) -> Rime | None:
    """The medial, nucleus and coda of a syllable; None if it is not a Vietnamese syllable."""
    onset, rest = _onset(_bare(syllable))
    if onset == "qu":
        medial = "u"
    elif rest[:1] == "o" and rest[1:2] in ("a", "ă", "e"):
        medial, rest = "o", rest[1:]
    elif rest[:1] == "u" and rest[1:2] in ("y", "ê", "â", "ơ"):
        medial, rest = "u", rest[1:]
    else:
        medial = ""
    if onset == "gi" and rest[:1] == "ê" and len(rest) > 1:
        rest = "i" + rest                            # giếng, giết: gi + iê (giề, with no coda: gi + ê)
    for spelt, nucleus, alone in (("iê", "iê", False), ("yê", "iê", False), ("ia", "iê", True),
                                  ("ya", "iê", True), ("uô", "uô", False), ("ua", "uô", True),
                                  ("ươ", "ươ", False), ("ưa", "ươ", True), ("oo", "oo", False)):
        if rest.startswith(spelt) and (not alone or rest == spelt):
            if spelt == "ua" and medial:             # qua: q + u + a
                continue
            coda = rest[len(spelt):]
            break
    else:
        if not rest or rest[0] not in VOWELS:
            return None
        nucleus, coda = ("i" if rest[0] == "y" else rest[0]), rest[1:]
        if nucleus == "a" and coda in ("u", "y"):
            nucleus = "ă"                            # au, ay: a short a
        elif nucleus == "a" and coda in ("nh", "ch"):
            nucleus = "e"                            # anh, ach: a front vowel
    if coda not in CODAS:
        return None
    return Rime(medial, nucleus, CODAS[coda])


def rhyme_kind(a: str, b: str) -> str | None:
    """'chinh' (vần chính), 'thong' (vần thông) or None (no rhyme; also when either is trắc or
    not a Vietnamese syllable)."""
    if not (is_flat(a) and is_flat(b)):
        return None
    ra, rb = rime_parts(a), rime_parts(b)
    if ra is None or rb is None or ra.coda != rb.coda:
        return None
    if ra.nucleus == rb.nucleus:
        return "chinh"
    return "thong" if ROWS[ra.nucleus] == ROWS[rb.nucleus] else None


def rhyme_key(syllable: str, loose: bool) -> str | None:
    """A key such that two syllables rhyme (vần chính; ``loose``: chính or thông) iff their keys are
    equal and not None."""
    r = rime_parts(syllable) if is_flat(syllable) else None
    if r is None:
        return None
    return f"{ROWS[r.nucleus] if loose else r.nucleus}|{r.coda}"


def follows_six(six: list[str]) -> bool:
    """Luật bằng trắc of a câu lục (its syllables): 2, 4, 6 are B, T, B."""
    return len(six) == 6 and all(tone_class(six[p - 1]) == c for p, c in RULE_SIX.items())


def follows_eight(eight: list[str], tones_differ: bool = True) -> bool:
    """Luật bằng trắc of a câu bát: 2, 4, 6, 8 are B, T, B, B; ``tones_differ``: and its 6th and 8th
    differ in tone (one ngang, one huyền)."""
    if len(eight) != 8 or not all(tone_class(eight[p - 1]) == c for p, c in RULE_EIGHT.items()):
        return False
    return not tones_differ or tone(eight[5]) != tone(eight[7])


def follows(six: list[str], eight: list[str]) -> bool:
    """The whole luật bằng trắc of a lục bát couplet (syllable lists)."""
    return follows_six(six) and follows_eight(eight)
