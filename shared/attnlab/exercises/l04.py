"""Exercise checkers for lesson 04 (attention masks).

- ``check_causal_mask(fn)``:  ``fn(T) -> (1, 1, T, T)`` bool, True = may attend (lower triangle)
- ``check_padding_mask(fn)``: ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False on padding
- ``check_decoder_mask(fn)``: ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding
- ``check_mha_mask(fn)``:     ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool,
  True = BLOCKED: the ``attn_mask`` that ``nn.MultiheadAttention`` expects.

Each checker compares the student's function with ``attnlab.masks`` on several inputs,
recognises the typical mistakes and prints a hint for the first one it meets. The
``_diagnose_*`` functions return ``(ok, message key, fields)`` so the tests can see which
hint was chosen.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..masks import causal_mask, decoder_mask, padding_mask
from ._common import Diagnosis, Feedback, call_student, evaluate, printing
from ._common import shape as _shape

def _ids(token_ids: torch.Tensor) -> str:
    return str(token_ids.tolist())


def _is_additive(got: torch.Tensor) -> bool:
    """A float mask in the additive form: 0 where allowed, -inf (or a huge negative) where blocked."""
    return got.is_floating_point() and bool((got < -1e4).any()) and bool(((got == 0) | (got < -1e4)).all())


def _values(got: torch.Tensor) -> torch.Tensor:
    """The student's mask as bool (nonzero = True), whatever its dtype."""
    return got != 0


def _first(mask: torch.Tensor) -> tuple[int, ...]:
    return tuple(int(v) for v in mask.nonzero()[0].tolist())


# ---------------------------------------------------------------------------------- causal mask
_T_CASES = (4, 1, 7, 2, 5)


def _diagnose_causal_mask(fn: Callable) -> Diagnosis:
    for T in _T_CASES:
        expected = causal_mask(T)                                          # (1, 1, T, T)
        got = call_student(fn, T)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.shape == (T, T):
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
                _, _, i, j = _first(future)
                return False, "l04.hint.causal_future", {"T": T, "i": i, "j": j}
            _, _, i, j = _first(expected & ~m)
            return False, "l04.hint.causal_past", {"T": T, "i": i, "j": j}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return True, "l04.ok.causal", {}


def evaluate_causal_mask(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(T) -> (1, 1, T, T)`` bool, True = may attend: query i sees keys 0..i."""
    return evaluate("l04.ex.causal", lambda: _diagnose_causal_mask(fn), lang)

check_causal_mask = printing(evaluate_causal_mask)


# ------------------------------------------------------------------------------- padding mask
# (token_ids, pad_id). The second case has B == S, so a (B, S) mask would even broadcast
# (wrongly); the pad_id = 1 cases contain real tokens with id 0.
_PAD_CASES = (
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 0),
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 0),
    ([[0, 5, 1, 1], [7, 3, 0, 1]], 1),
    ([[8, 2, 6, 9, 9, 9]], 9),
    ([[0, 0, 3, 7, 2], [5, 1, 8, 4, 6]], 0),
)


def _diagnose_padding_mask(fn: Callable) -> Diagnosis:
    for ids, pad_id in _PAD_CASES:
        token_ids = torch.tensor(ids)
        B, S = token_ids.shape
        expected = padding_mask(token_ids, pad_id)                        # (B, 1, 1, S)
        got = call_student(fn, token_ids.clone(), pad_id)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
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
            if torch.equal(m, ~expected):
                return False, "l04.hint.pad_inverted", {}
            if pad_id != 0 and torch.equal(m, padding_mask(token_ids, 0)):
                return False, "l04.hint.pad_id", {"pad_id": pad_id}
            return False, "l04.hint.pad_values", {"ids": _ids(token_ids), "pad_id": pad_id}
        if got.dtype != torch.bool:
            return False, "l04.hint.dtype", {"got": str(got.dtype)}
    return True, "l04.ok.padding", {}


def evaluate_padding_mask(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(token_ids (B, S), pad_id) -> (B, 1, 1, S)`` bool, False exactly on padding."""
    return evaluate("l04.ex.padding", lambda: _diagnose_padding_mask(fn), lang)

check_padding_mask = printing(evaluate_padding_mask)


# ------------------------------------------------------------------------------- decoder mask
_DEC_CASES = (
    ([[0, 0, 3, 7, 2], [5, 1, 8, 4, 6]], 0),        # left padding first: there masking the rows only
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 0),        # differs from masking rows and columns
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 0),
    ([[0, 5, 1, 1], [7, 3, 0, 1]], 1),
    ([[8, 2, 6, 9, 9, 9]], 9),
)


def _diagnose_decoder_mask(fn: Callable) -> Diagnosis:
    for ids, pad_id in _DEC_CASES:
        token_ids = torch.tensor(ids)
        B, T = token_ids.shape
        expected = decoder_mask(token_ids, pad_id)                        # (B, 1, T, T)
        causal, padding = causal_mask(T), padding_mask(token_ids, pad_id)
        got = call_student(fn, token_ids.clone(), pad_id)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
        if got.shape != expected.shape:
            if got.shape == (B, T, T):
                return False, "l04.hint.dec_no_head", {}
            return False, "l04.hint.shape", {"case": f"token_ids {_shape(token_ids.shape)}",
                                             "expected": _shape(expected.shape), "got": _shape(got.shape)}
        if _is_additive(got):
            return False, "l04.hint.additive", {}
        m = _values(got)
        if not torch.equal(m, expected):
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
    return True, "l04.ok.decoder", {}


def evaluate_decoder_mask(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(token_ids (B, T), pad_id) -> (B, 1, T, T)`` = causal AND padding."""
    return evaluate("l04.ex.decoder", lambda: _diagnose_decoder_mask(fn), lang)

check_decoder_mask = printing(evaluate_decoder_mask)


# ------------------------------------------------------------------- nn.MultiheadAttention mask
# (token_ids, num_heads): course decoder masks (B, 1, T, T) without fully masked rows
# (nn.MultiheadAttention's weights path turns those into NaN). B > 1 with different
# padding per sentence, so the order of the (sentence, head) matrices matters.
_MHA_CASES = (
    ([[3, 7, 2, 0, 0], [5, 1, 8, 4, 6]], 4),
    ([[4, 9, 0], [6, 0, 0], [2, 5, 7]], 2),
    ([[8, 2, 6, 0, 0, 0]], 3),
    ([[5, 0, 0, 0], [1, 2, 0, 0], [3, 4, 6, 0], [7, 8, 9, 1]], 2),
)


def _diagnose_mha_mask(fn: Callable) -> Diagnosis:
    for ids, H in _MHA_CASES:
        mask = decoder_mask(torch.tensor(ids))                            # (B, 1, T, T), True = may attend
        B, _, T, S = mask.shape
        expected = (~mask).expand(B, H, T, S).reshape(B * H, T, S)       # True = blocked, index b*H + h
        got = call_student(fn, mask.clone(), H)
        if not isinstance(got, torch.Tensor):
            return False, "l04.hint.not_tensor", {"got": type(got).__name__}
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
    return True, "l04.ok.mha", {}


def evaluate_mha_mask(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(mask (B, 1, T, S), num_heads) -> (B * num_heads, T, S)`` bool, True = blocked:
    a course mask turned into the ``attn_mask`` of ``nn.MultiheadAttention``."""
    return evaluate("l04.ex.mha", lambda: _diagnose_mha_mask(fn), lang)

check_mha_mask = printing(evaluate_mha_mask)
