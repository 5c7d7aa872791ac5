"""Lesson 04: the inputs each mask checker draws from its seed (``l04.check_*``): lengths, token ids
with padding on either side, pad ids other than 0 with a real token 0, head counts. The probe and
the judge both call these, so they see the same inputs.
"""
from __future__ import annotations

import torch

from ..masks import decoder_mask
from ._common import Draw


def token_ids(d: Draw, B: int, S: int, pad_id: int, *, left: bool = False, real_zero: bool = False) -> torch.Tensor:
    """(B, S) token ids: sentence 0 padded (at least one pad), the last one not padded (B > 1), the
    others drawn; real tokens never equal pad_id, and with ``real_zero`` a real token 0 (pad_id ≠ 0:
    a fixed 0 in place of pad_id shows). ``left``: padding before the tokens."""
    rows = []
    for b in range(B):
        n_pad = d.int(1, S - 1) if b == 0 else (0 if b == B - 1 and B > 1 else d.int(0, S - 1))
        real = [d.choice([v for v in range(10) if v != pad_id]) for _ in range(S - n_pad)]
        if real_zero and b == 0:
            real[-1] = 0
        rows.append([pad_id] * n_pad + real if left else real + [pad_id] * n_pad)
    return torch.tensor(rows)


def causal_cases(seed: int) -> list[tuple[int]]:
    """Lengths drawn from the seed: short, 1, and long ones (beyond any small table built once), odd and even."""
    d = Draw(seed, "l04/causal")
    return [(d.int(3, 6),), (1,), (2 * d.int(9, 20),), (2 * d.int(8, 20) + 1,), (d.int(2, 8),)]


def padding_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id) drawn from the seed: B ≠ S; B == S (a (B, S) mask would even broadcast,
    wrongly), called without pad_id (its default, 0); pad_id ≠ 0 with a real token 0; one sentence;
    left padding."""
    d = Draw(seed, "l04/padding")
    B = d.int(2, 3)
    n = d.int(3, 4)
    pad_id = d.int(1, 9)
    return [(token_ids(d, B, d.int(B + 2, 7), 0), 0),
            (token_ids(d, n, n, 0), DEFAULT),
            (token_ids(d, 2, d.int(4, 6), pad_id, real_zero=True), pad_id),
            (token_ids(d, 1, d.int(4, 8), d.int(1, 9)), None),
            (token_ids(d, d.int(2, 3), d.int(5, 7), 0, left=True), 0)]


DEFAULT = "default"       # a case that calls fn(token_ids) alone: the exercise's default pad_id=0


def with_pad(cases: list) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id): the one-sentence case pads with its own id (the id at its end); a
    ``DEFAULT`` case pads with 0, the default of the exercise's signature."""
    return [(ids, 0 if pad == DEFAULT else int(ids[0, -1]) if pad is None else pad) for ids, pad in cases]


def by_default(cases: list) -> list[bool]:
    """Which cases call the function without pad_id."""
    return [marker == DEFAULT for _, marker in cases]


def arguments(cases: list) -> list[tuple]:
    """What the probe passes: (token_ids, pad_id), or (token_ids,) alone for a ``DEFAULT`` case."""
    return [(ids,) if marker == DEFAULT else (ids, pad_id)
            for (ids, pad_id), (_, marker) in zip(with_pad(cases), cases)]


def decoder_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id) drawn from the seed: left padding first (there masking the rows only
    differs from masking rows and columns), right padding, B == T called without pad_id (its default,
    0), pad_id ≠ 0 with a real 0, one sentence."""
    d = Draw(seed, "l04/decoder")
    n = d.int(3, 4)
    pad_id = d.int(1, 9)
    return [(token_ids(d, 2, d.int(5, 7), 0, left=True), 0),
            (token_ids(d, d.int(2, 3), d.int(5, 8), 0), 0),
            (token_ids(d, n, n, 0), DEFAULT),
            (token_ids(d, 2, d.int(4, 6), pad_id, real_zero=True), pad_id),
            (token_ids(d, 1, d.int(5, 9), d.int(1, 9)), None)]


def mha_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(course decoder mask (B, 1, T, T), num_heads) drawn from the seed: right padding only (no fully
    masked rows: nn.MultiheadAttention's weights path turns those into NaN), B > 1 with different
    padding per sentence (the order of the (sentence, head) matrices matters), one sentence."""
    d = Draw(seed, "l04/mha")
    while True:                                        # B·H ≠ T: no axis order of the result fits by chance
        B, T, H = d.int(2, 3), d.int(4, 7), d.int(2, 4)
        if B * H != T:
            break
    cases = [(token_ids(d, B, T, 0), H), (token_ids(d, 3, 3, 0), 2),
             (token_ids(d, 1, d.int(4, 7), 0), d.int(2, 5)), (token_ids(d, 4, d.int(4, 6), 0), d.int(2, 3))]
    return [(decoder_mask(ids), H) for ids, H in cases]
