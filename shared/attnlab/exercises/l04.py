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
from ._common import (Diagnosis, Exercise, Feedback, attempt, changed_inputs, evaluate_exercise,
                      forbidden_use, is_tensor, judging, kind, printing, raises, references, source_of, value_of)
from ._common import shape as _shape
from .l04_inputs import arguments as _arguments, by_default as _by_default, causal_cases as _causal_cases
from .l04_inputs import decoder_cases as _decoder_cases, mha_cases as _mha_cases, padding_cases as _padding_cases
from .l04_inputs import with_pad as _with_pad

__all__ = ["check_causal_mask", "evaluate_causal_mask", "check_padding_mask", "evaluate_padding_mask",
           "check_decoder_mask", "evaluate_decoder_mask", "check_mha_mask", "evaluate_mha_mask", "EXERCISES"]

def _ids(token_ids: torch.Tensor) -> str:
    return str(token_ids.tolist())


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
