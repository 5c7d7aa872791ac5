"""Lesson 07's data: digit sequences and their reversal, ``3 1 4 | 4 1 3``.

Layout of one example of length n (ids ``0..9`` are digits, ``SEP`` the separator, ``PAD``
fills the row up to ``2 * max_len + 1`` tokens)::

    index   0 ... n-1   n     n+1 ... 2n    2n+1 ...
    token   s_1 ... s_n SEP   s_n ... s_1   PAD ...

``inputs = ids[:, :-1]`` and ``targets = ids[:, 1:]``: the model at input position t predicts
``targets[:, t] = ids[:, t + 1]``. The loss counts only the positions whose target is a reversed
digit, t = n .. 2n - 1 (``loss_mask``). Held-out sequences come from their own seed
(``HELDOUT_SEED``) and the training batches never contain one of them (``training_batches``
redraws any row that is in the held-out set). The lengths come from ``config`` (anything with
``min_len`` and ``max_len``, such as the model's ``TinyConfig``; None: the lesson's 6 to 8 digits).
"""
from __future__ import annotations

from typing import Iterator, Sequence

import torch

SEP, PAD = 10, 11
TOKENS = ("0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "|", "_")   # label of each token id
VOCAB_SIZE = len(TOKENS)

TRAIN_SEED = 0            # the training batches (and the model's initialisation)
HELDOUT_SEED = 1234       # the held-out sequences: another seed, and excluded from training
HELDOUT_SIZE = 1000
BATCH_SIZE = 32


MIN_LEN, MAX_LEN = 6, 8  # the lesson's task: 6 to 8 digits (TinyConfig's defaults)


def _sizes(config) -> tuple[int, int]:
    """``(min_len, max_len)`` of ``config`` (anything with those two fields, e.g. a TinyConfig); None: the lesson's."""
    return (MIN_LEN, MAX_LEN) if config is None else (int(config.min_len), int(config.max_len))


def encode(digits: Sequence[int]) -> list[int]:
    """[3, 1, 4] -> [3, 1, 4, SEP, 4, 1, 3]: the digits, the separator, the digits reversed."""
    digits = [int(d) for d in digits]
    if not digits or any(not 0 <= d <= 9 for d in digits):
        raise ValueError(f"expected a non-empty sequence of digits 0-9, got {digits!r}")
    return digits + [SEP] + digits[::-1]


def to_text(ids) -> str:
    """Token ids -> '3 1 4 | 4 1 3' (padding left out)."""
    return " ".join(TOKENS[i] for i in torch.as_tensor(ids).tolist() if i != PAD)


def make_batch(batch_size: int, generator: torch.Generator, config=None) -> torch.Tensor:
    """(batch_size, 2 * max_len + 1) rows 's_1..s_n SEP s_n..s_1 PAD..', n uniform in min_len..max_len."""
    min_len, max_len = _sizes(config)
    L = 2 * max_len + 1
    n = torch.randint(min_len, max_len + 1, (batch_size, 1), generator=generator)           # (B, 1)
    digits = torch.randint(0, 10, (batch_size, max_len), generator=generator)               # (B, max_len)
    j = torch.arange(L)[None]                                                               # (1, L)
    source = torch.where(j < n, j, 2 * n - j).clamp(0, max_len - 1)     # which digit goes at index j
    ids = digits.gather(1, source)
    ids = torch.where(j == n, SEP, ids)
    return torch.where(j > 2 * n, PAD, ids)                                                 # (B, L)


def _codes(ids: torch.Tensor) -> torch.Tensor:
    """One int64 per row; equal rows get equal codes (a polynomial hash modulo 2^31 - 1)."""
    code = torch.zeros(ids.shape[0], dtype=torch.int64)
    for col in ids.cpu().long().unbind(1):
        code = (code * VOCAB_SIZE + col) % 2147483647
    return code


_HELDOUT: dict[tuple[int, int], tuple[torch.Tensor, torch.Tensor]] = {}   # sizes -> (rows, their codes)


def _heldout(config=None) -> tuple[torch.Tensor, torch.Tensor]:
    sizes = _sizes(config)
    if sizes not in _HELDOUT:
        rows = make_batch(HELDOUT_SIZE, torch.Generator().manual_seed(HELDOUT_SEED), config)
        _HELDOUT[sizes] = rows, _codes(rows)
    return _HELDOUT[sizes]


def heldout(config=None) -> torch.Tensor:
    """The HELDOUT_SIZE held-out rows (B, 2 * max_len + 1), drawn from HELDOUT_SEED. Never trained on."""
    return _heldout(config)[0].clone()


def is_heldout(ids: torch.Tensor, config=None) -> torch.Tensor:
    """(B,) bool: which rows of ``ids`` are in the held-out set."""
    return torch.isin(_codes(ids), _heldout(config)[1])


def training_batches(batch_size: int = BATCH_SIZE, seed: int = TRAIN_SEED,
                     config=None) -> Iterator[torch.Tensor]:
    """Endless seeded batches on the CPU; a row that happens to be a held-out sequence is redrawn."""
    g = torch.Generator().manual_seed(seed)
    while True:
        ids = make_batch(batch_size, g, config)
        hit = is_heldout(ids, config)
        while hit.any():
            ids[hit] = make_batch(int(hit.sum()), g, config)
            hit = is_heldout(ids, config)
        yield ids


def split(ids: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Full rows (B, L) -> inputs (B, L-1) and targets (B, L-1): targets[:, t] = ids[:, t + 1]."""
    return ids[:, :-1], ids[:, 1:]


def loss_mask(inputs: torch.Tensor, targets: torch.Tensor) -> torch.Tensor:
    """(B, T) bool: True where the target is a reversed digit, i.e. from the separator on, not padding.

    The input at the separator predicts the first reversed digit; the source digits (random, so
    unpredictable) and the padding after the last digit do not count.
    """
    from_sep = torch.cumsum(inputs == SEP, dim=1) > 0          # the separator and everything after it
    return from_sep & (targets != PAD)


def lengths(ids: torch.Tensor) -> torch.Tensor:
    """(B,) number of source digits n of each row (= index of the separator)."""
    return (ids == SEP).int().argmax(dim=1)
