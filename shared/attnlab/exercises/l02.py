"""Exercise checkers for lesson 02 (multi-head attention).

- ``check_split_heads(fn)``: ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``
- ``check_merge_heads(fn)``: ``fn(x (B, H, T, d_k)) -> (B, T, D)``
- ``check_mha_size(fn)``:    ``fn(d_model, num_heads) -> (d_k, number of parameters)``

Each checker compares the student's function with ``attnlab.MultiHeadAttention`` on several
inputs, recognises the typical mistakes and prints a hint for the first one it meets.
The ``_diagnose_*`` functions return ``(ok, message key, fields)`` so the tests can see
which hint was chosen.
"""
from __future__ import annotations

import numbers
from typing import Callable

import torch

from ..multihead import MultiHeadAttention
from ._common import Diagnosis, Feedback, call_student, evaluate, mark_student, printing, shape

# (B, T, D, H): batch > 1, T != H and d_k != H, so that every typical mistake shows.
_CASES = ((2, 5, 12, 3), (1, 4, 8, 2), (3, 7, 16, 4), (2, 3, 6, 6), (2, 6, 8, 1))


def _reference(D: int, H: int) -> MultiHeadAttention:
    """The package's layer (evaluate runs every checker on a forked random state)."""
    return MultiHeadAttention(D, H)


def _inputs(B: int, T: int, D: int, seed: int) -> torch.Tensor:
    return torch.randn(B, T, D, generator=torch.Generator().manual_seed(seed))


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.float(), b.float(), atol=1e-6, rtol=0)


def _call(fn: Callable, *args) -> tuple[object, Diagnosis | None]:
    """(the student's result, None), or (None, hint) for a typical view/reshape error."""
    try:
        return call_student(fn, *args), None
    except (TypeError, RuntimeError) as e:
        msg = str(e).splitlines()[0] if str(e) else ""
        if isinstance(e, TypeError) and "float" in msg:
            return None, (False, "l02.hint.float_size", {})
        if isinstance(e, RuntimeError) and "is invalid for input of size" in msg:
            return None, (False, "l02.hint.bad_sizes", {"message": msg})
        if isinstance(e, RuntimeError) and "view size is not compatible" in msg:
            return None, (False, "l02.hint.merge_view", {})
        raise


def _check_tensor(got, x: torch.Tensor, expected: torch.Tensor) -> Diagnosis | None:
    if not isinstance(got, torch.Tensor):
        return False, "l02.hint.not_tensor", {"got": type(got).__name__}
    if got.shape != expected.shape:
        return False, "l02.hint.shape", {"inp": shape(x.shape), "expected": shape(expected.shape),
                                         "got": shape(got.shape)}
    return None


# ------------------------------------------------------------------------------- split_heads
def _hard_coded(diagnosis: Diagnosis, i: int) -> Diagnosis:
    """A function right on the first case and wrong on a later one with other sizes wrote sizes
    as numbers: say so instead of the symptom."""
    if i > 0 and diagnosis[1] in ("l02.hint.bad_sizes", "l02.hint.shape", "l02.hint.wrong_dk", "l02.hint.values"):
        return False, "l02.hint.hard_coded", {}
    return diagnosis


def _diagnose_split_heads(fn: Callable) -> Diagnosis:
    for i, (B, T, D, H) in enumerate(_CASES):
        problem = _split_case(fn, B, T, D, H, i)
        if problem:
            return _hard_coded(problem, i)
    return True, "l02.ok.split", {}


def _split_case(fn: Callable, B: int, T: int, D: int, H: int, i: int) -> Diagnosis | None:
    d_k = D // H
    x = _inputs(B, T, D, seed=100 + i)
    expected = _reference(D, H).split_heads(x)                     # (B, H, T, d_k)
    got, hint = _call(fn, x.clone(), H)
    if hint:
        return hint
    if isinstance(got, torch.Tensor) and got.shape != expected.shape:
        if got.shape == (B, T, H, d_k):
            return False, "l02.hint.split_forgot_transpose", {"got": shape(got.shape)}
        if got.dim() == 4 and got.shape[-1] != d_k:
            return False, "l02.hint.wrong_dk", {"got": got.shape[-1], "d_k": d_k, "d_model": D, "h": H}
    hint = _check_tensor(got, x, expected)
    if hint:
        return hint
    if _same(got, expected):
        return None
    if _same(got, x.reshape(B, H, T, d_k)):
        return False, "l02.hint.split_no_transpose", {}
    if _same(got, x.reshape(B, T, d_k, H).permute(0, 3, 1, 2)):
        return False, "l02.hint.split_interleaved", {}
    return False, "l02.hint.values", {"inp": shape(x.shape)}


def evaluate_split_heads(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``, as MultiHeadAttention.split_heads."""
    return evaluate("l02.ex.split_heads", lambda: _diagnose_split_heads(fn), lang)

check_split_heads = printing(evaluate_split_heads)


# ------------------------------------------------------------------------------- merge_heads
def _diagnose_merge_heads(fn: Callable) -> Diagnosis:
    for i, (B, T, D, H) in enumerate(_CASES):
        problem = _merge_case(fn, B, T, D, H, i)
        if problem:
            return _hard_coded(problem, i)
    return True, "l02.ok.merge", {}


def _merge_case(fn: Callable, B: int, T: int, D: int, H: int, i: int) -> Diagnosis | None:
    d_k = D // H
    x = _inputs(B, T, D, seed=200 + i).view(B, H, T, d_k)                 # contiguous (B, H, T, d_k)
    expected = _reference(D, H).merge_heads(x)                     # (B, T, D)
    got, hint = _call(fn, x.clone())
    hint = hint or _check_tensor(got, x, expected)
    if hint:
        return hint
    if _same(got, expected):
        return None
    if _same(got, x.reshape(B, T, D)):
        return False, "l02.hint.merge_no_transpose", {}
    if _same(got, x.permute(0, 2, 3, 1).reshape(B, T, D)):
        return False, "l02.hint.merge_interleaved", {}
    return False, "l02.hint.values", {"inp": shape(x.shape)}


def evaluate_merge_heads(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(x (B, H, T, d_k)) -> (B, T, D)``, as MultiHeadAttention.merge_heads."""
    return evaluate("l02.ex.merge_heads", lambda: _diagnose_merge_heads(fn), lang)

check_merge_heads = printing(evaluate_merge_heads)


# ---------------------------------------------------------------------------------- mha_size
_SIZE_CASES = ((64, 8), (512, 8), (12, 3), (64, 1), (30, 5), (8, 8))
_NOT_DIVISIBLE = ((10, 3), (64, 6))


def _number(v):
    """A Python number from an int/float or a one-element tensor; None otherwise."""
    if isinstance(v, torch.Tensor) and v.numel() == 1:
        v = v.item()
    return v if isinstance(v, numbers.Real) and not isinstance(v, bool) else None


def _diagnose_mha_size(fn: Callable) -> Diagnosis:
    for D, H in _SIZE_CASES:
        fields = {"d_model": D, "h": H}
        reference = _reference(D, H)
        d_k, n = reference.d_k, sum(p.numel() for p in reference.parameters())   # n = 4 (D^2 + D)
        got = call_student(fn, D, H)
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        got_dk, got_n = _number(got[0]), _number(got[1])
        if got_dk is None or got_n is None:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        if got_dk != d_k:
            return False, "l02.hint.size_dk", {**fields, "got": got_dk}
        if got_n != n:
            if H > 1 and got_n in (H * n, H * 4 * D * D):
                return False, "l02.hint.size_scales_h", fields
            if got_n == 4 * D * D:
                return False, "l02.hint.size_no_bias", fields
            if got_n in (3 * (D * D + D), 3 * D * D):
                return False, "l02.hint.size_no_wo", fields
            return False, "l02.hint.size_count", {**fields, "got": got_n}
        if not all(isinstance(v, numbers.Integral) for v in (got_dk, got_n)):
            return False, "l02.hint.size_int", {**fields, "got": repr(tuple(got))}
    for D, H in _NOT_DIVISIBLE:
        fields = {"d_model": D, "h": H}
        try:
            fn(D, H)
        except ValueError:
            continue
        except AssertionError:
            return False, "l02.hint.size_assert", fields
        except Exception as err:                        # noqa: BLE001 - the student's own error
            raise mark_student(err)
        return False, "l02.hint.size_divisible", fields
    return True, "l02.ok.size", {}


def evaluate_mha_size(fn: Callable, lang: str | None = None) -> Feedback:
    """Check ``fn(d_model, num_heads) -> (d_k, number of parameters of MultiHeadAttention)``;
    ``fn`` must raise ValueError when d_model is not divisible by num_heads."""
    return evaluate("l02.ex.mha_size", lambda: _diagnose_mha_size(fn), lang)

check_mha_size = printing(evaluate_mha_size)
