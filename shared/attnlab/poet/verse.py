"""Measuring verse: line shape, whole poems, and the lục bát rhyme.

Units. A Vietnamese line is counted in syllables (words between spaces, punctuation stripped);
a Chinese line in characters (punctuation not counted).

Shape. vi: a line is right when it has 6 or 8 syllables and not as many as the line before it
(lục bát alternates 6 and 8). zh: a line is right when it has 5 or 7 characters. A Chinese poem
(lines between blank lines) is right when it has 4 or 8 lines, all of the same length (5 or 7).

Rhyme (vi). In lục bát the 6th syllable of the 8-syllable line rhymes with the 6th (last)
syllable of the 6-syllable line before it, and the 8th with the 6th of the next 6-syllable line.
Both rhyming syllables carry a flat tone (thanh bằng: ngang or huyền). The strict test here:

    rhymes(a, b)  <=>  rime(a) == rime(b)  and  a, b both flat

``rime`` is the syllable without its tone and without its onset (initial consonant): the text is
decomposed (NFD), the five tone marks removed (the vowel marks ^ ˘ ' of â ă ê ô ơ ư stay), the
result recomposed (NFC), and the longest onset of ngh ng nh ch gh gi kh ph th tr qu b c d đ g h k l
m n p r s t v x cut off ("gi" only before a vowel: gìn -> in, gia -> a; "qu" as in the spelling:
quen -> en). Near rhymes (au/âu, ong/ông) fail this test on purpose: it is strict.
"""
from __future__ import annotations

import unicodedata

from ..course.i18n import t

PUNCTUATION = set(",.;:!?…-–—\"'“”‘’()[]«»，。、；：！？")
TONES = {"\u0300": "huyen", "\u0301": "sac", "\u0303": "nga", "\u0309": "hoi", "\u0323": "nang"}
FLAT = ("ngang", "huyen")             # thanh bằng
ONSETS = ("ngh", "ng", "nh", "ch", "gh", "gi", "kh", "ph", "th", "tr", "qu",
          "b", "c", "d", "đ", "g", "h", "k", "l", "m", "n", "p", "r", "s", "t", "v", "x")
VOWELS = set("aăâeêioôơuưy")


def _check_lang(lang: str) -> str:
    if lang not in ("vi", "zh"):
        raise ValueError(t("poet.err.lang", got=repr(lang), langs="vi, zh"))
    return lang


# ----------------------------------------------------------------------------- units and shape
def units(line: str, lang: str) -> list[str]:
    """vi: the syllables of ``line`` (punctuation stripped); zh: its characters (no punctuation, no space)."""
    line = unicodedata.normalize("NFC", line)
    if _check_lang(lang) == "vi":
        words = ("".join(c for c in w if c not in PUNCTUATION) for w in line.split())
        return [w for w in words if w]
    return [c for c in line if c not in PUNCTUATION and not c.isspace()]


def verse_lines(text: str) -> list[str]:
    """The complete, non-empty lines of ``text``: a last line without its newline is left out."""
    lines = text.split("\n")[:-1]
    return [line for line in lines if line.strip()]


def shape_flags(lines: list[str], lang: str, previous: int | None = None) -> list[bool]:
    """Per line: does it have the right shape? ``previous``: the syllable count of the line before
    the first one (vi; e.g. the prompt's last line), None if unknown."""
    flags = []
    for line in lines:
        n = len(units(line, lang))
        if lang == "vi":
            flags.append(n in (6, 8) and n != previous)
            previous = n
        else:
            flags.append(n in (5, 7))
    return flags


def poem_flags(text: str) -> list[bool]:
    """zh: per complete poem (a group of lines followed by a blank line): 4 or 8 lines, all 5 or all 7
    characters, ending in ，and 。 alternately."""
    flags = []
    for block in text.split("\n\n")[:-1]:
        lines = [line for line in block.split("\n") if line]
        if not lines:
            continue
        sizes = {len(units(line, "zh")) for line in lines}
        marks = all(line.endswith("，" if i % 2 == 0 else "。") for i, line in enumerate(lines))
        flags.append(len(lines) in (4, 8) and len(sizes) == 1 and sizes <= {5, 7} and marks)
    return flags


# ----------------------------------------------------------------------------- rhyme (vi)
def tone(syllable: str) -> str:
    """The tone of a Vietnamese syllable: ngang, huyen, sac, hoi, nga or nang (from its NFD marks)."""
    marks = [TONES[c] for c in unicodedata.normalize("NFD", syllable) if c in TONES]
    return marks[0] if marks else "ngang"


def is_flat(syllable: str) -> bool:
    """Thanh bằng: ngang or huyền."""
    return tone(syllable) in FLAT


def rime(syllable: str) -> str:
    """The syllable without tone and onset, lower case: 'Nhàn' -> 'an', 'quên' -> 'ên', 'gìn' -> 'in'."""
    bare = "".join(c for c in unicodedata.normalize("NFD", syllable.lower()) if c not in TONES)
    bare = unicodedata.normalize("NFC", bare)
    bare = "".join(c for c in bare if c not in PUNCTUATION)
    for onset in ONSETS:
        if bare.startswith(onset) and len(bare) > len(onset):
            if onset == "gi" and bare[2] not in VOWELS:
                onset = "g"                           # gìn, gịt: g + in, not gi + n
            return bare[len(onset):]
    return bare


def rhymes(a: str, b: str) -> bool:
    """The strict lục bát rhyme: the same rime (tone ignored) and both syllables flat."""
    return rime(a) == rime(b) and is_flat(a) and is_flat(b)


def couplets(lines: list[str]) -> list[tuple[list[str], list[str]]]:
    """(6-syllable line, 8-syllable line) pairs of consecutive lines, as syllable lists."""
    out = []
    for first, second in zip(lines, lines[1:]):
        a, b = units(first, "vi"), units(second, "vi")
        if len(a) == 6 and len(b) == 8:
            out.append((a, b))
    return out


def rhyme_flags(lines: list[str]) -> list[bool]:
    """vi: for each 6-8 couplet of ``lines``, does the 6th syllable of the 8 rhyme with the 6th of the 6?"""
    return [rhymes(six[5], eight[5]) for six, eight in couplets(lines)]
