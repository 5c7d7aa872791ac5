"""Chance levels for the verse measures, exact (counting, no random draws):

- ``shuffle_chance``: a rule on the classes of some positions of a line, when the line's units are
  put in a uniformly random order (the average over every order);
- ``pair_chance``: two positions sharing a key, when the units found there are paired at random
  (every pair of different places, the real pairs left out);
- ``order_chance``: vi line shape, when the lines are put in a random order.
"""
from __future__ import annotations

import collections
import functools
import itertools
import math
from typing import Callable


def shuffle_chance(classes: list, positions: tuple[int, ...], accept: Callable[[tuple], bool]) -> float:
    """The probability that ``accept(classes at positions)`` (positions from 1) holds when the
    units of the line (their ``classes``) are put in a uniformly random order: exact, by counting.
    ``accept`` should be a module-level function: results are cached by (counts, positions, accept)."""
    return _shuffle(tuple(sorted(collections.Counter(classes).items())), tuple(positions), accept)


@functools.lru_cache(maxsize=4096)
def _shuffle(counts: tuple, positions: tuple[int, ...], accept) -> float:
    counts = dict(counts)
    n, k = sum(counts.values()), len(positions)
    ways = 0
    for combo in itertools.product(counts, repeat=k):
        if accept(combo):
            used, w = collections.Counter(), 1
            for c in combo:
                w *= counts[c] - used[c]
                used[c] += 1
            ways += w
    return ways / math.perm(n, k)


def pair_chance(pairs: list[tuple[frozenset, frozenset]]) -> float:
    """The rate at which ``a`` of one pair and ``b`` of another share a key (each unit given as
    its set of keys), over every ordered pair of different pairs: exact, by counting."""
    n = len(pairs)
    if n < 2:
        return math.nan
    firsts = collections.Counter(a for a, _ in pairs)
    seconds = collections.Counter(b for _, b in pairs)
    every = sum(ca * cb for a, ca in firsts.items() for b, cb in seconds.items() if a & b)
    own = sum(1 for a, b in pairs if a & b)
    return (every - own) / (n * (n - 1))


def order_chance(lengths: list[int], previous: int | None) -> float:
    """vi: the expected share of right lines (6 or 8 syllables, not as many as the line before)
    when ``lengths`` are put in a random order after a line of ``previous`` syllables."""
    m = len(lengths)
    if m == 0:
        return math.nan
    c = collections.Counter(lengths)
    first = sum(c[x] for x in (6, 8) if x != previous) / m
    if m == 1:
        return first
    later = sum(c[x] * (m - c[x]) for x in (6, 8)) / (m * (m - 1))
    return (first + (m - 1) * later) / m
