"""Exercise checkers for lesson 04 (attention masks).

- ``check_causal_mask(fn)``:  ``fn(T) -> (1, 1, T, T)`` bool, True = may attend (lower triangle),
  written without ``attnlab.causal_mask``
- ``check_padding_mask(fn)``: ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False on padding,
  without ``attnlab.padding_mask``
- ``check_decoder_mask(fn)``: ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding,
  without ``attnlab.decoder_mask``
- ``check_mha_mask(fn)``:     ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool,
  True = BLOCKED: the ``attn_mask`` that ``nn.MultiheadAttention`` expects.

Each is a probe (the student's function on lengths, token ids, pad ids and head counts drawn from
the seed; the source is kept for the forbidden call) and a judge (compares with ``attnlab.masks``,
recognises the typical mistakes, one hint each).
"""
from __future__ import annotations

from typing import Callable

import torch

from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import (Diagnosis, Draw, Exercise, Feedback, attempt, changed_inputs, evaluate_exercise,
                      forbidden_use, is_tensor, judging, kind, printing, raises, references, source_of, value_of)
from ._common import shape as _shape

__all__ = ["check_causal_mask", "evaluate_causal_mask", "check_padding_mask", "evaluate_padding_mask",
           "check_decoder_mask", "evaluate_decoder_mask", "check_mha_mask", "evaluate_mha_mask", "EXERCISES"]

def _ids(token_ids: torch.Tensor) -> str:
    return str(token_ids.tolist())


def _token_ids(d: Draw, B: int, S: int, pad_id: int, *, left: bool = False, real_zero: bool = False) -> torch.Tensor:
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


def _probe_cases(fn: Callable, cases: list, *, forbidden: bool = True) -> dict:
    """Each case's outcome (the inputs cloned: in-place changes are recorded), and the source."""
    results = {"source": source_of(fn), "references": references(fn)} if forbidden else {}
    for i, args in enumerate(cases):
        results[f"case{i}"] = outcome = attempt(fn, *[a.clone() if is_tensor(a) else a for a in args])
        if outcome.get("value") is None:
            break
    return results


def _default_pad(function: str):
    """An ``errors`` hook: a function called without pad_id that fails for want of it lost the
    default ``pad_id=0`` of the exercise's signature."""
    def errors(error):
        if raises(error, "TypeError") and "missing 1 required positional argument" in error["message"]:
            return False, "l04.hint.pad_default", {"function": function}
        return None
    return errors


def _forbidden(results: dict, name: str) -> Diagnosis | None:
    return (False, "ex.forbidden", {"name": f"attnlab.{name}"}) if forbidden_use(results, {name}) else None


def _is_additive(got: torch.Tensor) -> bool:
    """A float mask in the additive form: 0 where allowed, -inf (or a huge negative) where blocked."""
    return got.is_floating_point() and bool((got < -1e4).any()) and bool(((got == 0) | (got < -1e4)).all())


def _values(got: torch.Tensor) -> torch.Tensor:
    """The student's mask as bool (nonzero = True), whatever its dtype."""
    return got != 0


def _first(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(v) for v in mask.nonzero()[0].tolist())


# ---------------------------------------------------------------------------------- causal mask
def _causal_cases(seed: int) -> list[tuple[int]]:
    """Lengths drawn from the seed: short, 1, and long ones (beyond any small table built once), odd and even."""
    d = Draw(seed, "l04/causal")
    return [(d.int(3, 6),), (1,), (2 * d.int(9, 20),), (2 * d.int(8, 20) + 1,), (d.int(2, 8),)]


def probe_causal_mask(fn: Callable, *, seed: int) -> dict:
    return _probe_cases(fn, _causal_cases(seed))


@judging
def judge_causal_mask(results: dict, *, seed: int) -> Diagnosis:
    for i, (T,) in enumerate(_causal_cases(seed)):
        expected = causal_mask(T)                                          # (1, 1, T, T)
        got = value_of(results, f"case{i}")
        if not is_tensor(got):
            return False, "l04.hint.not_tensor", {"got": kind(got)}
        if got.shape != expected.shape:
            if got.shape == (T, T) and T > 1:
                return False, "l04.hint.causal_2d", {}
            return False, "l04.hint.shape", {"case": f"T = {T}", "expected": _shape(expected.shape),
                                             "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if torch.equal(m, ~expected):
                return False, "l04.hint.causal_inverted", {}
            if torch.equal(m, expected.transpose(-2, -1)):
                return False, "l04.hint.causal_upper", {}
            if torch.equal(m, torch.tril(torch.ones(T, T, dtype=torch.bool), diagonal=-1)[None, None]):
                return False, "l04.hint.causal_no_diag", {}
            future = m & ~expected
            if future.any():
                _, _, i_, j = _first(future)
                return False, "l04.hint.causal_future", {"T": T, "i": i_, "j": j}
            _, _, i_, j = _first(expected & ~m)
            return False, "l04.hint.causal_past", {"T": T, "i": i_, "j": j}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return _forbidden(results, "causal_mask") or (True, "l04.ok.causal", {})


CAUSAL = Exercise("l04.causal_mask", "l04.ex.causal", ("my_causal_mask",), probe_causal_mask, judge_causal_mask)


def evaluate_causal_mask(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(T) -> (1, 1, T, T)`` bool, True = may attend: query i sees keys 0..i; written
    without ``attnlab.causal_mask``."""
    return evaluate_exercise(CAUSAL, (fn,), lang, seed)

check_causal_mask = printing(evaluate_causal_mask)


# ------------------------------------------------------------------------------- padding mask
def _padding_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id) drawn from the seed: B ≠ S; B == S (a (B, S) mask would even broadcast,
    wrongly), called without pad_id (its default, 0); pad_id ≠ 0 with a real token 0; one sentence;
    left padding."""
    d = Draw(seed, "l04/padding")
    B = d.int(2, 3)
    n = d.int(3, 4)
    pad_id = d.int(1, 9)
    return [(_token_ids(d, B, d.int(B + 2, 7), 0), 0),
            (_token_ids(d, n, n, 0), _DEFAULT),
            (_token_ids(d, 2, d.int(4, 6), pad_id, real_zero=True), pad_id),
            (_token_ids(d, 1, d.int(4, 8), d.int(1, 9)), None),
            (_token_ids(d, d.int(2, 3), d.int(5, 7), 0, left=True), 0)]


_DEFAULT = "default"       # a case that calls fn(token_ids) alone: the exercise's default pad_id=0


def _with_pad(cases: list) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id): the one-sentence case pads with its own id (the id at its end); a
    ``_DEFAULT`` case pads with 0, the default of the exercise's signature."""
    return [(ids, 0 if pad == _DEFAULT else int(ids[0, -1]) if pad is None else pad) for ids, pad in cases]


def _by_default(cases: list) -> list[bool]:
    """Which cases call the function without pad_id."""
    return [marker == _DEFAULT for _, marker in cases]


def _arguments(cases: list) -> list[tuple]:
    """What the probe passes: (token_ids, pad_id), or (token_ids,) alone for a ``_DEFAULT`` case."""
    return [(ids,) if marker == _DEFAULT else (ids, pad_id)
            for (ids, pad_id), (_, marker) in zip(_with_pad(cases), cases)]


def probe_padding_mask(fn: Callable, *, seed: int) -> dict:
    return _probe_cases(fn, _arguments(_padding_cases(seed)))


@judging
def judge_padding_mask(results: dict, *, seed: int) -> Diagnosis:
    for i, (token_ids, pad_id) in enumerate(_with_pad(_padding_cases(seed))):
        B, S = token_ids.shape
        expected = padding_mask(token_ids, pad_id)                        # (B, 1, 1, S)
        got = value_of(results, f"case{i}", errors=_default_pad("my_padding_mask"))
        if not is_tensor(got):
            return False, "l04.hint.not_tensor", {"got": kind(got)}
        if got.shape != expected.shape:
            if got.shape == (B, S):
                return False, "l04.hint.pad_2d", {}
            if got.shape == (B, 1, S, 1):
                return False, "l04.hint.pad_rows", {}
            return False, "l04.hint.shape", {"case": f"token_ids {_shape(token_ids.shape)}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if _by_default(_padding_cases(seed))[i] and not torch.equal(m, ~expected):   # right with pad_id=0 given
                return False, "l04.hint.pad_default_value", {"function": "my_padding_mask"}
            if torch.equal(m, ~expected):
                return False, "l04.hint.pad_inverted", {}
            if pad_id != 0 and torch.equal(m, padding_mask(token_ids, 0)):
                return False, "l04.hint.pad_id", {"pad_id": pad_id}
            return False, "l04.hint.pad_values", {"ids": _ids(token_ids), "pad_id": pad_id}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "token_ids"}
    return _forbidden(results, "padding_mask") or (True, "l04.ok.padding", {})


PADDING = Exercise("l04.padding_mask", "l04.ex.padding", ("my_padding_mask",), probe_padding_mask, judge_padding_mask)


def evaluate_padding_mask(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False exactly on padding;
    written without ``attnlab.padding_mask``."""
    return evaluate_exercise(PADDING, (fn,), lang, seed)

check_padding_mask = printing(evaluate_padding_mask)


# ------------------------------------------------------------------------------- decoder mask
def _decoder_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(token_ids, pad_id) drawn from the seed: left padding first (there masking the rows only
    differs from masking rows and columns), right padding, B == T called without pad_id (its default,
    0), pad_id ≠ 0 with a real 0, one sentence."""
    d = Draw(seed, "l04/decoder")
    n = d.int(3, 4)
    pad_id = d.int(1, 9)
    return [(_token_ids(d, 2, d.int(5, 7), 0, left=True), 0),
            (_token_ids(d, d.int(2, 3), d.int(5, 8), 0), 0),
            (_token_ids(d, n, n, 0), _DEFAULT),
            (_token_ids(d, 2, d.int(4, 6), pad_id, real_zero=True), pad_id),
            (_token_ids(d, 1, d.int(5, 9), d.int(1, 9)), None)]


def probe_decoder_mask(fn: Callable, *, seed: int) -> dict:
    return _probe_cases(fn, _arguments(_decoder_cases(seed)))


@judging
def judge_decoder_mask(results: dict, *, seed: int) -> Diagnosis:
    for i, (token_ids, pad_id) in enumerate(_with_pad(_decoder_cases(seed))):
        B, T = token_ids.shape
        expected = decoder_mask(token_ids, pad_id)                        # (B, 1, T, T)
        causal, padding = causal_mask(T), padding_mask(token_ids, pad_id)
        got = value_of(results, f"case{i}", errors=_default_pad("my_decoder_mask"))
        if not is_tensor(got):
            return False, "l04.hint.not_tensor", {"got": kind(got)}
        if got.shape != expected.shape:
            if got.shape == (B, T, T):
                return False, "l04.hint.dec_no_head", {}
            return False, "l04.hint.shape", {"case": f"token_ids {_shape(token_ids.shape)}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
            if _by_default(_decoder_cases(seed))[i] and not torch.equal(m, ~expected):   # right with pad_id=0 given
                return False, "l04.hint.pad_default_value", {"function": "my_decoder_mask"}
            if torch.equal(m, ~expected):
                return False, "l04.hint.dec_inverted", {}
            if torch.equal(m, (causal | padding).expand_as(m)):
                return False, "l04.hint.dec_or", {}
            if pad_id != 0 and torch.equal(m, decoder_mask(token_ids, 0)):
                return False, "l04.hint.pad_id", {"pad_id": pad_id}
            pad_rows = padding.transpose(-2, -1)                          # (B, 1, T, 1): the queries
            if torch.equal(m, causal & padding & pad_rows):            # (= rows only with right padding;
                return False, "l04.hint.dec_pad_rows_too", {}          # rows only fails the first case)
            if torch.equal(m, causal & pad_rows):
                return False, "l04.hint.dec_pad_rows", {}
            if (m & ~padding).any():
                return False, "l04.hint.dec_no_padding", {}
            if (m & ~causal).any():
                return False, "l04.hint.dec_no_causal", {}
            return False, "l04.hint.dec_values", {"ids": _ids(token_ids), "pad_id": pad_id}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "token_ids"}
    return _forbidden(results, "decoder_mask") or (True, "l04.ok.decoder", {})


DECODER = Exercise("l04.decoder_mask", "l04.ex.decoder", ("my_decoder_mask",), probe_decoder_mask, judge_decoder_mask,
                   args=("my_decoder_mask",))


def evaluate_decoder_mask(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding; written without
    ``attnlab.decoder_mask``."""
    return evaluate_exercise(DECODER, (fn,), lang, seed)

check_decoder_mask = printing(evaluate_decoder_mask)


# ------------------------------------------------------------------- nn.MultiheadAttention mask
def _mha_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    """(course decoder mask (B, 1, T, T), num_heads) drawn from the seed: right padding only (no fully
    masked rows: nn.MultiheadAttention's weights path turns those into NaN), B > 1 with different
    padding per sentence (the order of the (sentence, head) matrices matters), one sentence."""
    d = Draw(seed, "l04/mha")
    while True:                                        # B·H ≠ T: no axis order of the result fits by chance
        B, T, H = d.int(2, 3), d.int(4, 7), d.int(2, 4)
        if B * H != T:
            break
    cases = [(_token_ids(d, B, T, 0), H), (_token_ids(d, 3, 3, 0), 2),
             (_token_ids(d, 1, d.int(4, 7), 0), d.int(2, 5)), (_token_ids(d, 4, d.int(4, 6), 0), d.int(2, 3))]
    return [(decoder_mask(ids), H) for ids, H in cases]


def probe_mha_mask(fn: Callable, *, seed: int) -> dict:
    return _probe_cases(fn, _mha_cases(seed), forbidden=False)


@judging
def judge_mha_mask(results: dict, *, seed: int) -> Diagnosis:
    for i, (mask, H) in enumerate(_mha_cases(seed)):
        B, _, T, S = mask.shape
        expected = (~mask).expand(B, H, T, S).reshape(B * H, T, S)       # True = blocked, index b*H + h
        got = value_of(results, f"case{i}")
        if not is_tensor(got):
            return False, "l04.hint.not_tensor", {"got": kind(got)}
        if got.shape != expected.shape:
            if got.dim() == 4:
                return False, "l04.hint.mha_4d", {"got": _shape(got.shape), "expected": _shape(expected.shape)}
            if got.dim() == 3 and got.shape[1:] == (T, S):
                return False, "l04.hint.mha_no_heads", {"bh": B * H, "got": got.shape[0]}
            return False, "l04.hint.shape", {"case": f"mask {_shape(mask.shape)}, num_heads = {H}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if got.is_floating_point():
            return False, "l04.hint.mha_float", {}
        if got.dtype != torch.bool:
            return False, "l04.hint.mha_dtype", {"got": str(got.dtype)}
        if not torch.equal(got, expected):               # (equal masks are what nn.MultiheadAttention needs)
            head_major = (~mask[:, 0]).repeat(H, 1, 1)                   # index h*B + b
            if torch.equal(got, ~expected) or torch.equal(got, ~head_major):
                return False, "l04.hint.mha_not_inverted", {}
            if torch.equal(got, head_major):
                return False, "l04.hint.mha_order", {}
            return False, "l04.hint.mha_values", {"inp": _shape(mask.shape), "h": H}
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "mask"}
    return True, "l04.ok.mha", {}


MHA = Exercise("l04.mha_mask", "l04.ex.mha", ("my_mha_mask",), probe_mha_mask, judge_mha_mask)


def evaluate_mha_mask(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool, True = blocked:
    a course mask turned into the ``attn_mask`` of ``nn.MultiheadAttention``."""
    return evaluate_exercise(MHA, (fn,), lang, seed)

check_mha_mask = printing(evaluate_mha_mask)

EXERCISES = (CAUSAL, PADDING, DECODER, MHA)
