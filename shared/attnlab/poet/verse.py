"""Measuring verse: the units of a line, its shape, whole poems.

Units. A Vietnamese line is counted in syllables (words between spaces, punctuation stripped);
a Chinese line in characters (punctuation not counted).

Shape. vi: a line is right when it has 6 or 8 syllables and not as many as the line before it
(lục bát alternates 6 and 8). zh: a line is right when it has 5 or 7 characters. A Chinese poem
(lines between blank lines) is right when it has 4 or 8 lines, all of the same length (5 or 7).

Tones and rhymes: ``luc_bat`` (vi) and ``jinti`` (zh); both forms behind one interface: ``forms``.
"""
from __future__ import annotations

import unicodedata

from ..course.i18n import t

PUNCTUATION = set(",.;:!?…-–—\"'“”‘’()[]«»，。、；：！？")


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
