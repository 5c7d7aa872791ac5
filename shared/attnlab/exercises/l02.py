"""Exercise checkers for lesson 02 (multi-head attention).

- ``check_split_heads(fn)``: ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``
- ``check_merge_heads(fn)``: ``fn(x (B, H, T, d_k)) -> (B, T, D)``
- ``check_mha_size(fn)``:    ``fn(d_model, num_heads, num_kv_heads) -> (d_k, number of parameters)`` of
  grouped-query attention, by the formula (``l02_size``; building a layer is refused)

Each is a probe (the student's function on sizes drawn from the seed, after the lesson's own
example) and a judge (compares with ``attnlab.MultiHeadAttention``'s split/merge, or with the parameter
count of torch's layers, recognises the typical mistakes, one hint each).
"""
from __future__ import annotations

from typing import Callable

import torch

from ..multihead import MultiHeadAttention
from ._common import (Diagnosis, Draw, Exercise, Feedback, Verdict, attempt, changed_inputs, evaluate_exercise,
                      is_tensor, judging, kind, printing, raises, shape, value_of)
from .l02_size import SIZE, check_mha_size, evaluate_mha_size, judge_mha_size, probe_mha_size  # noqa: F401

__all__ = ["check_split_heads", "evaluate_split_heads", "check_merge_heads", "evaluate_merge_heads",
           "check_mha_size", "evaluate_mha_size", "EXERCISES"]

_LESSON = (2, 5, 12, 3)   # the lesson's example (B, T, D, H): right there only = sizes written as numbers


def _head_cases(seed: int) -> list[tuple[int, int, int, int]]:
    """(B, T, D, H): the lesson's example, then sizes drawn from the seed: B > 1 with B ≠ T, T ≠ H and
    d_k ≠ H (so that every typical mistake shows), B = 1, d_k = 1 and one head; odd and even."""
    d = Draw(seed, "l02/heads")
    cases = [_LESSON]
    while len(cases) < 3:
        B, T, H, d_k = d.int(2, 4), d.int(2, 8), d.int(2, 5), d.int(2, 6)
        if B != T and T != H and d_k != H and (B, T, H * d_k, H) not in cases:
            cases.append((B, T, H * d_k, H))
    H, d_k = d.int(2, 4), d.int(2, 5)
    cases.append((1, d.int(3, 7), H * d_k, H))                        # one sentence
    H = d.int(2, 6)
    cases.append((d.int(2, 3), d.choice([t for t in range(2, 8) if t != H]), H, H))   # d_k = 1
    cases.append((d.int(2, 3), d.int(3, 7), d.int(3, 9), 1))         # one head: d_k = D
    return cases


def _reference(D: int, H: int) -> MultiHeadAttention:
    """The package's layer, on the meta device: only its split/merge (shapes) and its size are used."""
    with torch.device("meta"):
        return MultiHeadAttention(D, H)


def _head_errors(error: dict):
    """A typical view/reshape error -> its hint (None: the generic wording)."""
    if raises(error, "TypeError") and "float" in error["message"]:
        return False, "l02.hint.float_size", {}
    if raises(error, "RuntimeError") and "is invalid for input of size" in error["message"]:
        return False, "l02.hint.bad_sizes", {"message": error["message"]}
    if raises(error, "RuntimeError") and "view size is not compatible" in error["message"]:
        return False, "l02.hint.merge_view", {}
    return None


def _check_tensor(got, x: torch.Tensor, expected: torch.Tensor) -> Diagnosis | None:
    if not is_tensor(got):
        return False, "l02.hint.not_tensor", {"got": kind(got)}
    if got.shape != expected.shape:
        return False, "l02.hint.shape", {"inp": shape(x.shape), "expected": shape(expected.shape),
                                         "got": shape(got.shape)}
    return None


def _same(a: torch.Tensor, b: torch.Tensor) -> bool:
    return a.shape == b.shape and torch.allclose(a.double(), b.double(), atol=1e-6, rtol=0)


def _hard_coded(diagnosis: Diagnosis, i: int) -> Diagnosis:
    """A function right on the lesson's example and wrong on a later case with other sizes wrote
    sizes as numbers: say so instead of the symptom."""
    if i > 0 and diagnosis[1] in ("l02.hint.bad_sizes", "l02.hint.shape", "l02.hint.wrong_dk", "l02.hint.values"):
        return False, "l02.hint.hard_coded", {}
    return diagnosis


def _judge_heads(results: dict, seed: int, inputs: Callable, problem: Callable, ok_key: str) -> Diagnosis:
    for i, (B, T, D, H) in enumerate(_head_cases(seed)):
        x = inputs(seed, i, B, T, D, H)
        try:
            got = value_of(results, f"case{i}", errors=_head_errors)
        except Verdict as verdict:
            if verdict.diagnosis[0] is False and verdict.diagnosis[1].startswith("l02."):
                return _hard_coded(verdict.diagnosis, i)
            raise
        hint = problem(got, x, B, T, D, H)
        if hint:
            return _hard_coded(hint, i)
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "x"}
    return True, ok_key, {}


# ------------------------------------------------------------------------------- split_heads
def _split_input(seed: int, i: int, B: int, T: int, D: int, H: int) -> torch.Tensor:
    return Draw(seed, f"l02/split/{i}").randn(B, T, D)


def probe_split_heads(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, (B, T, D, H) in enumerate(_head_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, _split_input(seed, i, B, T, D, H), H)
        if outcome.get("value") is None:
            break
    return results


def _split_problem(got, x, B, T, D, H) -> Diagnosis | None:
    d_k = D // H
    expected = _reference(D, H).split_heads(x)                         # (B, H, T, d_k)
    if is_tensor(got) and got.shape != expected.shape:
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


@judging
def judge_split_heads(results: dict, *, seed: int) -> Diagnosis:
    return _judge_heads(results, seed, _split_input, _split_problem, "l02.ok.split")


SPLIT = Exercise("l02.split_heads", "l02.ex.split_heads", ("my_split_heads",), probe_split_heads, judge_split_heads)


def evaluate_split_heads(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(x (B, T, D), num_heads) -> (B, H, T, d_k)``, as MultiHeadAttention.split_heads."""
    return evaluate_exercise(SPLIT, (fn,), lang, seed)

check_split_heads = printing(evaluate_split_heads)


# ------------------------------------------------------------------------------- merge_heads
def _merge_input(seed: int, i: int, B: int, T: int, D: int, H: int) -> torch.Tensor:
    return Draw(seed, f"l02/merge/{i}").randn(B, T, D).view(B, H, T, D // H)   # contiguous (B, H, T, d_k)


def probe_merge_heads(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, (B, T, D, H) in enumerate(_head_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, _merge_input(seed, i, B, T, D, H))
        if outcome.get("value") is None:
            break
    return results


def _merge_problem(got, x, B, T, D, H) -> Diagnosis | None:
    expected = _reference(D, H).merge_heads(x)                         # (B, T, D)
    hint = _check_tensor(got, x, expected)
    if hint:
        return hint
    if _same(got, expected):
        return None
    if _same(got, x.reshape(B, T, D)):
        return False, "l02.hint.merge_no_transpose", {}
    if _same(got, x.permute(0, 2, 3, 1).reshape(B, T, D)):
        return False, "l02.hint.merge_interleaved", {}
    return False, "l02.hint.values", {"inp": shape(x.shape)}


@judging
def judge_merge_heads(results: dict, *, seed: int) -> Diagnosis:
    return _judge_heads(results, seed, _merge_input, _merge_problem, "l02.ok.merge")


MERGE = Exercise("l02.merge_heads", "l02.ex.merge_heads", ("my_merge_heads",), probe_merge_heads, judge_merge_heads)


def evaluate_merge_heads(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(x (B, H, T, d_k)) -> (B, T, D)``, as MultiHeadAttention.merge_heads."""
    return evaluate_exercise(MERGE, (fn,), lang, seed)

check_merge_heads = printing(evaluate_merge_heads)


EXERCISES = (SPLIT, MERGE, SIZE)
