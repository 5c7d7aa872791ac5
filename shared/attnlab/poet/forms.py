"""One verse form per language, with the same interface: ``poet.form("vi")`` (lục bát, Truyện
Kiều) and ``poet.form("zh")`` (近体诗, the Tang poems). The lesson's code calls only this interface,
so it is the same program in both languages.

    form = poet.form(lang)
    form.units(line)            the syllables (vi) / characters (zh) of a line
    form.tone_class(unit)       "B" / "T" (vi);  "平" / "仄" / "两读" / None (zh, by the 平水韵)
    form.follows(first, second) does a couplet (two lines of text) keep the tone rule?
    form.rhymes(a, b)           do two rhyme syllables / characters rhyme?
    form.rhyme_name(a, b)       how: "vần chính" / "vần thông" (vi), the shared 平声 group (zh), or None
    form.rhyme_pairs(lines)     the (name, a, b) that the form says must rhyme in consecutive lines
    form.report(texts, skip)    every measure of ``form.MEASURES`` on ``texts`` (complete lines
                                only; ``skip``: lines at the start of each text that the model
                                did not write, the prompt, never counted alone or in a pair)

A measure is ``Measure(hits, total, chance)``: ``chance`` is the rate expected by chance, computed
exactly (no random draws) on the same text:

- a rule on the tones of a line: the same units of the line in a random order (the average over
  every order);
- a rhyme between two positions: pairs formed at random from the units found at those positions
  (every pair of different places, the real pairs left out);
- vi line shape: the same lines in a random order (is 6 then 8 more than the lengths alone give?);
- zh line and poem shape: None (a shape has no chance level; compare with the real poems).
"""
from __future__ import annotations

import collections
import functools
import math
from typing import NamedTuple

from . import jinti, luc_bat
from .chance import order_chance, pair_chance, shuffle_chance
from .verse import poem_flags, units


class Measure(NamedTuple):
    hits: int
    total: int
    chance: float | None          # the rate expected by chance, None where there is none

    @property
    def rate(self) -> float:
        return self.hits / self.total if self.total else math.nan


def _tally(flags_and_chances: list[tuple[bool, float]]) -> Measure:
    hits = sum(f for f, _ in flags_and_chances)
    n = len(flags_and_chances)
    return Measure(hits, n, sum(c for _, c in flags_and_chances) / n if n else math.nan)


def _pairs(pool: list[tuple[bool, frozenset, frozenset]]) -> Measure:
    return Measure(sum(f for f, _, _ in pool), len(pool), pair_chance([(a, b) for _, a, b in pool]))


def _complete_lines(text: str) -> list[str]:
    """Every complete line of ``text`` (a last line without its newline is left out), blank ones kept."""
    return text.split("\n")[:-1]


# --------------------------------------------------------------------------- lục bát
_FLAT_TONES = frozenset(luc_bat.FLAT_TONES)


def _six_rule(c: tuple) -> bool:            # positions 2, 4, 6: B, T, B
    return c[0] in _FLAT_TONES and c[1] == "T" and c[2] in _FLAT_TONES


def _eight_rule(c: tuple) -> bool:          # positions 2, 4, 6, 8: B, T, B, B
    return c[0] in _FLAT_TONES and c[1] == "T" and c[2] in _FLAT_TONES and c[3] in _FLAT_TONES


def _ngang_huyen(c: tuple) -> bool:         # positions 6, 8: one ngang, one huyền
    return set(c) == _FLAT_TONES


class LucBat:
    lang = "vi"
    FLAT, OBLIQUE = luc_bat.FLAT, luc_bat.OBLIQUE
    MEASURES = ("lines", "luat_six", "luat_eight", "tones_six_eight", "van_lung", "van_lung_chinh", "van_chan")

    units = staticmethod(lambda line: units(line, "vi"))
    tone_class = staticmethod(luc_bat.tone_class)

    @staticmethod
    def rhymes(a: str, b: str) -> bool:
        """Vần chính or vần thông, both syllables bằng (``luc_bat.rhyme_kind``)."""
        return luc_bat.rhyme_kind(a, b) is not None

    def follows(self, first: str, second: str) -> bool:
        """Luật bằng trắc of a lục bát couplet: a câu lục, then a câu bát."""
        return luc_bat.follows(self.units(first), self.units(second))

    @staticmethod
    def rhyme_name(a: str, b: str) -> str | None:
        return {"chinh": "vần chính", "thong": "vần thông", None: None}[luc_bat.rhyme_kind(a, b)]

    def rhyme_pairs(self, lines: list[str]) -> list[tuple[str, str, str]]:
        """Vần lưng (6th of a câu bát – 6th of the câu lục before) and vần chân (8th of a câu bát –
        6th of the next câu lục) in consecutive lines, named in the current language."""
        from ..course.i18n import t
        u = [self.units(line) for line in lines]
        out = []
        for a, b in zip(u, u[1:]):
            if len(a) == 6 and len(b) == 8:
                out.append((t("poet.pair.van_lung"), a[5], b[5]))
            elif len(a) == 8 and len(b) == 6:
                out.append((t("poet.pair.van_chan"), a[7], b[5]))
        return out

    @staticmethod
    def _tones(line: list[str]) -> list[str]:
        return [t if t in luc_bat.FLAT_TONES else "T" for t in map(luc_bat.tone, line)]

    def report(self, texts: list[str], skip: int = 1) -> dict[str, Measure]:
        rows: dict[str, list] = {k: [] for k in self.MEASURES}
        for text in texts:
            lines = [self.units(line) for line in _complete_lines(text) if line.strip()]
            own = lines[skip:]
            before = len(lines[skip - 1]) if skip and len(lines) >= skip else None
            lengths = [len(u) for u in own]
            chance = order_chance(lengths, before)
            rows["lines"] += [(f, chance) for f in shape_flags_from_lengths(lengths, before)]
            for u in own:
                tones = self._tones(u)
                if len(u) == 6:
                    rows["luat_six"].append((luc_bat.follows_six(u), shuffle_chance(tones, (2, 4, 6), _six_rule)))
                elif len(u) == 8:
                    rows["luat_eight"].append((luc_bat.follows_eight(u, tones_differ=False),
                                               shuffle_chance(tones, (2, 4, 6, 8), _eight_rule)))
                    rows["tones_six_eight"].append((_ngang_huyen((tones[5], tones[7])),
                                                    shuffle_chance(tones, (6, 8), _ngang_huyen)))
            for i in range(skip, len(lines) - 1):
                a, b = lines[i], lines[i + 1]
                if len(a) == 6 and len(b) == 8:
                    for key, loose in (("van_lung", True), ("van_lung_chinh", False)):
                        rows[key].append(self._rhyme(a[5], b[5], loose))
                elif len(a) == 8 and len(b) == 6:
                    rows["van_chan"].append(self._rhyme(a[7], b[5], True))
        out = {k: _tally(rows[k]) for k in ("lines", "luat_six", "luat_eight", "tones_six_eight")}
        out.update({k: _pairs(rows[k]) for k in ("van_lung", "van_lung_chinh", "van_chan")})
        return out

    @staticmethod
    def _rhyme(a: str, b: str, loose: bool):
        key = functools.partial(luc_bat.rhyme_key, loose=loose)
        ka, kb = key(a), key(b)
        return (ka is not None and ka == kb, frozenset({ka} - {None}), frozenset({kb} - {None}))


def shape_flags_from_lengths(lengths: list[int], previous: int | None) -> list[bool]:
    """vi: per line of ``lengths`` syllables, is it 6 or 8 and not as long as the line before?"""
    flags = []
    for n in lengths:
        flags.append(n in (6, 8) and n != previous)
        previous = n
    return flags


# --------------------------------------------------------------------------- 近体诗
def _fits(c: tuple, start: str) -> bool:    # the even positions alternate, the 2nd being ``start``
    return all(jinti.fits(x, start if i % 2 == 0 else jinti.opposite(start)) for i, x in enumerate(c))


def _level_first(c: tuple) -> bool:
    return _fits(c, jinti.LEVEL)


def _oblique_first(c: tuple) -> bool:
    return _fits(c, jinti.OBLIQUE)


def _all_either(c: tuple) -> bool:
    return all(x == jinti.EITHER for x in c)


class JinTi:
    lang = "zh"
    FLAT, OBLIQUE, EITHER = jinti.LEVEL, jinti.OBLIQUE, jinti.EITHER
    MEASURES = ("lines", "poems", "alternate", "oppose", "stick", "level_end", "rhyme")

    units = staticmethod(lambda line: units(line, "zh"))
    tone_class = staticmethod(jinti.tone_class)
    rhymes = staticmethod(jinti.rhymes)

    def follows(self, first: str, second: str) -> bool:
        """The 平仄 of a couplet: 二四六分明 in each line, the 对句 the opposite of the 出句."""
        return jinti.follows(self.units(first), self.units(second))

    @staticmethod
    def rhyme_name(a: str, b: str) -> str | None:
        shared = [g for g in jinti.groups(a) if g in jinti.level_groups(b)]
        return "、".join(shared) if shared else None

    def rhyme_pairs(self, lines: list[str]) -> list[tuple[str, str, str]]:
        """The last characters of consecutive even lines (lines 2 and 4, 4 and 6, …) of one poem."""
        from ..course.i18n import t
        u = [self.units(line) for line in lines]
        return [(t("poet.pair.rhyme"), u[i][-1], u[i + 2][-1]) for i in range(1, len(u) - 2, 2)]

    def report(self, texts: list[str], skip: int = 1) -> dict[str, Measure]:
        rows: dict[str, list] = {k: [] for k in self.MEASURES}
        lines_n = poems_n = 0
        hits = {"lines": 0, "poems": 0}
        for text in texts:
            flags = poem_flags(text)
            hits["poems"] += sum(flags)
            poems_n += len(flags)
            index, blocks, block = 0, [], []
            for line in _complete_lines(text):
                if line.strip():
                    block.append((index, self.units(line)))
                    index += 1
                elif block:
                    blocks.append(block)
                    block = []
            if block:
                blocks.append(block)
            for block in blocks:
                for j, (i, u) in enumerate(block):
                    if i < skip:
                        continue
                    lines_n += 1
                    hits["lines"] += len(u) in (5, 7)
                    cls = self._classes(u)
                    if cls is None:
                        continue
                    rows["alternate"].append(self._alternate(u, cls))
                    if j % 2 == 1:                                       # an even line (the 对句)
                        rows["level_end"].append((jinti.fits(cls[-1], jinti.LEVEL),
                                                  sum(jinti.fits(c, jinti.LEVEL) for c in cls) / len(cls)))
                        prev = block[j - 1]
                        pc = self._classes(prev[1])
                        if prev[0] >= skip and pc is not None and len(prev[1]) == len(u):
                            rows["oppose"].append(self._oppose(prev[1], pc, u, cls))
                        if j + 1 < len(block):
                            nu = block[j + 1][1]
                            nc = self._classes(nu)
                            if nc is not None and len(nu) == len(u):
                                rows["stick"].append(self._stick(u, cls, nu, nc))
                        if j + 2 < len(block):
                            nu = block[j + 2][1]
                            if len(nu) == len(u) and jinti.tone_class(nu[-1]) is not None:
                                a, b = jinti.level_groups(u[-1]), jinti.level_groups(nu[-1])
                                rows["rhyme"].append((bool(a & b), a, b))
        out = {"lines": Measure(hits["lines"], lines_n, None), "poems": Measure(hits["poems"], poems_n, None)}
        out.update({k: _tally(rows[k]) for k in ("alternate", "oppose", "stick", "level_end")})
        out["rhyme"] = _pairs(rows["rhyme"])
        return out

    @staticmethod
    def _classes(u: list[str]) -> list[str] | None:
        """The classes of a 5- or 7-character line, None if it is not one or the table lacks a character."""
        if len(u) not in (5, 7):
            return None
        cls = [jinti.tone_class(c) for c in u]
        return None if None in cls else cls

    @staticmethod
    def _q(cls: list[str], start: str | None) -> float:
        """Shuffled line: the chance its even positions fit the pattern whose 2nd is ``start``
        (None: fit both patterns, i.e. all 两读)."""
        rule = {jinti.LEVEL: _level_first, jinti.OBLIQUE: _oblique_first, None: _all_either}[start]
        return shuffle_chance(cls, jinti.even_positions(len(cls)), rule)

    def _alternate(self, u, cls):
        L, O = jinti.LEVEL, jinti.OBLIQUE
        return jinti.alternates(u), self._q(cls, L) + self._q(cls, O) - self._q(cls, None)

    def _oppose(self, a, ac, b, bc):
        L, O = jinti.LEVEL, jinti.OBLIQUE
        chance = (self._q(ac, L) * self._q(bc, O) + self._q(ac, O) * self._q(bc, L)
                  - self._q(ac, None) * self._q(bc, None))
        return jinti.follows(a, b), chance

    @staticmethod
    def _stick(b, bc, c, cc):
        share = lambda cls: collections.Counter(cls)  # noqa: E731
        pb, pc = share(bc), share(cc)
        chance = sum(pb[x] * pc[y] for x in pb for y in pc if x == y or jinti.EITHER in (x, y)) / (len(bc) * len(cc))
        return jinti.sticks(b, c), chance


@functools.lru_cache(maxsize=None)
def form(lang: str):
    """The verse form of the corpus ``lang``: lục bát ("vi") or 近体诗 ("zh")."""
    from .corpus import _lang
    return {"vi": LucBat, "zh": JinTi}[_lang(lang)]()
