"""Lesson 08's data: numbers 0..99 999 as source digits and target words (``attnlab.numwords``).

Source ids: ``PAD = 0``, digit d -> d + 1, right-padded to the longest number of the batch
(``S`` ≤ 5). Target ids: ``PAD = 0``, ``BOS = 1``, ``EOS = 2``, then the words of
``numwords.VOCAB[lang]``; a row is ``BOS w_1 .. w_n EOS PAD ..``. Teacher forcing: the decoder
reads the target shifted right by one, ``tgt_in = tgt[:, :-1]`` (starting with BOS), and
predicts ``tgt_out = tgt[:, 1:]``. Held-out numbers come from ``HELDOUT_SEED`` (1 000 numbers of
3 to 5 digits) and are never in a training batch.
"""
from __future__ import annotations

import functools
import operator
from typing import Sequence

import torch

from . import numwords
from ..course.languages import word_separator

PAD, BOS, EOS = 0, 1, 2
SRC_TOKENS = ("_",) + tuple("0123456789")            # source id -> label
MAX_DIGITS = 5

TRAIN_SEED = 0
HELDOUT_SEED = 1234
HELDOUT_SIZE = 1000
BATCH_SIZE = 64


def target_tokens(lang: str) -> tuple[str, ...]:
    """Target id -> label: ``_``, ``<s>``, ``</s>``, then the words of ``lang``."""
    _check_lang(lang)
    return ("_", "<s>", "</s>") + numwords.VOCAB[lang]


def _check_lang(lang) -> None:
    if lang not in numwords.LANGUAGES:
        raise ValueError(f"lang must be one of {numwords.LANGUAGES}, got {lang!r}")


_ROWS: dict[str, dict[int, tuple[list[int], list[int]]]] = {}        # lang -> number -> its row


def _row(n: int, lang: str) -> tuple[list[int], list[int]]:
    """(source ids, target ids BOS..EOS) of one number, computed once and kept."""
    rows = _ROWS.setdefault(lang, {})
    if n not in rows:
        w = numwords.words(n, lang)
        vocab = _vocab_index(lang)
        rows[n] = [int(d) + 1 for d in w.digits], [BOS] + [vocab[x] for x in w.tokens] + [EOS]
    return rows[n]


@functools.lru_cache(maxsize=None)
def _vocab_index(lang: str) -> dict[str, int]:
    return {w: i for i, w in enumerate(target_tokens(lang))}


def encode(numbers: Sequence[int], lang: str) -> tuple[torch.Tensor, torch.Tensor]:
    """numbers -> (src (B, S), tgt (B, T+1)), right-padded to the longest row of the batch."""
    _check_lang(lang)
    rows = [_row(_check_number(n), lang) for n in numbers]
    S = max(len(r[0]) for r in rows)
    T = max(len(r[1]) for r in rows)
    src = torch.tensor([r[0] + [PAD] * (S - len(r[0])) for r in rows])
    tgt = torch.tensor([r[1] + [PAD] * (T - len(r[1])) for r in rows])
    return src, tgt


def encode_source(numbers: Sequence[int]) -> torch.Tensor:
    """numbers -> src (B, S) right-padded digit ids (no words needed)."""
    rows = [[int(d) + 1 for d in str(_check_number(n))] for n in numbers]
    S = max(len(r) for r in rows)
    return torch.tensor([r + [PAD] * (S - len(r)) for r in rows])


def _check_number(n) -> int:
    if isinstance(n, bool) or (isinstance(n, torch.Tensor) and (n.dim() or n.is_floating_point())):
        raise TypeError(f"numbers must be ints, got {type(n).__name__}")
    try:
        n = operator.index(n)           # int, numpy/torch integer scalars
    except TypeError:
        raise TypeError(f"numbers must be ints, got {type(n).__name__}") from None
    if not 0 <= n <= numwords.MAX_NUMBER:
        raise ValueError(f"the model reads numbers 0..{numwords.MAX_NUMBER}, got {n}")
    return n


def draw_numbers(count: int, generator: torch.Generator, min_digits: int = 1,
                 max_digits: int = MAX_DIGITS) -> torch.Tensor:
    """(count,) numbers: a digit count uniform in min..max_digits, then a number uniform among those."""
    k = torch.randint(min_digits, max_digits + 1, (count,), generator=generator)
    low = torch.where(k == 1, 0, 10 ** (k - 1))
    high = 10 ** k                                                   # exclusive
    u = torch.rand(count, generator=generator, dtype=torch.float64)
    return (low + (u * (high - low)).long()).clamp(max=numwords.MAX_NUMBER)


@functools.lru_cache(maxsize=None)
def _heldout_numbers() -> torch.Tensor:
    g = torch.Generator().manual_seed(HELDOUT_SEED)
    seen: list[int] = []
    while len(seen) < HELDOUT_SIZE:
        for n in draw_numbers(HELDOUT_SIZE, g, min_digits=3).tolist():
            if n not in seen and len(seen) < HELDOUT_SIZE:
                seen.append(n)
    return torch.tensor(sorted(seen))


def heldout() -> list[int]:
    """The HELDOUT_SIZE held-out numbers (3 to 5 digits, from HELDOUT_SEED), sorted. Never trained on."""
    return _heldout_numbers().tolist()


@functools.lru_cache(maxsize=None)
def _heldout_flags() -> torch.Tensor:
    flags = torch.zeros(numwords.MAX_NUMBER + 1, dtype=torch.bool)
    flags[_heldout_numbers()] = True
    return flags


def is_heldout(numbers) -> torch.Tensor:
    """(B,) bool: which numbers are held out."""
    return _heldout_flags()[torch.as_tensor(numbers, dtype=torch.long)]


def training_numbers(batch_size: int = BATCH_SIZE, seed: int = TRAIN_SEED):
    """Endless seeded batches of numbers (CPU); a held-out number is redrawn."""
    g = torch.Generator().manual_seed(seed)
    while True:
        n = draw_numbers(batch_size, g)
        hit = is_heldout(n)
        while hit.any():
            n[hit] = draw_numbers(int(hit.sum()), g)
            hit = is_heldout(n)
        yield n


def shift_right(tgt: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Target rows (B, L) -> decoder input (B, L-1) = the row shifted right (starts with BOS), and
    the words to predict (B, L-1) = tgt[:, 1:]."""
    return tgt[:, :-1], tgt[:, 1:]


def decode_ids(ids, lang: str) -> list[str]:
    """Target ids -> words, stopping at EOS (BOS and PAD left out)."""
    vocab = target_tokens(lang)
    words = []
    for i in torch.as_tensor(ids).tolist():
        if i == EOS:
            break
        if i not in (PAD, BOS):
            words.append(vocab[i])
    return words


def join_words(words: Sequence[str], lang: str) -> str:
    return word_separator(lang).join(words)


def alignment_map(numbers: Sequence[int], lang: str) -> torch.Tensor:
    """(B, T, S) float: 1 at (word j, its source digit) for every word of every number, 0 elsewhere
    (rows of EOS and padding are all 0). T, S as in ``encode`` (T = target length - 1)."""
    src, tgt = encode(numbers, lang)
    R = torch.zeros(len(numbers), tgt.shape[1] - 1, src.shape[1])
    for b, n in enumerate(numbers):
        for j, s in enumerate(numwords.words(int(n), lang).align):
            R[b, j, s] = 1.0
    return R
