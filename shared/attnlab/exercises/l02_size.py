"""Lesson 02, exercise 3: the size of grouped-query attention (GQA), by the formula.

``fn(d_model, num_heads, num_kv_heads) -> (d_k, number of parameters)``: the queries have
``num_heads`` heads of d_k = d_model // num_heads features; the keys and values only ``num_kv_heads``
heads of d_k features, each shared by num_heads // num_kv_heads query heads. W_Q and W_O are
d_model × d_model, W_K and W_V d_model × (num_kv_heads · d_k), each with its bias. ValueError when
d_model % num_heads or num_heads % num_kv_heads is not 0; building a layer is refused (read from the
source). num_kv_heads == num_heads is the lesson's multi-head attention, 4 (d_model² + d_model).

The probe calls the student's function on sizes drawn from the seed; the judge compares with the
parameter count of torch's nn.Linear layers of those shapes and recognises the typical miscounts,
one hint each, told apart across the cases (``_count_mistake``).
"""
from __future__ import annotations

import functools
from typing import Callable

import torch
from torch import nn

from ._common import (Diagnosis, Draw, Exercise, Feedback, Verdict, attempt, evaluate_exercise, forbidden_use,
                      judging, number, printing, references, source_of, value_of)

__all__ = ["check_mha_size", "evaluate_mha_size", "SIZE"]

#: What "by the formula, without building the layer" rules out (read from the source).
_LAYERS = frozenset({"MultiHeadAttention", "MultiheadAttention", "Linear", "TransformerBlock", "parameters"})

#: The lesson's worked example (d_model, num_heads, num_kv_heads): never one of the checked cases.
LESSON_EXAMPLE = (8, 4, 2)

Size = tuple[int, int, int]                       # (d_model, num_heads, num_kv_heads)


def _size_cases(seed: int) -> tuple[list[Size], list[Size]]:
    """(valid sizes, sizes that must raise), drawn from the seed. Valid: one head; d_k = 1 and odd
    sizes with num_kv_heads == num_heads (where ignoring num_kv_heads is harmless); multi-query
    (num_kv_heads == 1); grouped, 1 < num_kv_heads < num_heads, small and large (d_k > 1: where the
    width of K and V shows). Invalid: two with d_model % num_heads != 0 (num_kv_heads divides
    num_heads), then two with num_heads % num_kv_heads != 0 (d_model divisible)."""
    d = Draw(seed, "l02/size/gqa")
    odd_h, odd_dk = d.choice([3, 5, 7]), d.choice([3, 5, 7, 9])
    h_one = d.int(4, 16)
    mqa_h = d.int(2, 16)
    kv, group = d.int(2, 4), d.int(2, 4)
    big_kv = d.choice([2, 4, 8])
    big_h = big_kv * d.choice([2, 4, 8])
    good = [(d.int(2, 64), 1, 1), (h_one, h_one, h_one), (odd_h * odd_dk, odd_h, odd_h),
            (mqa_h * d.int(2, 64), mqa_h, 1), (kv * group * d.int(2, 32), kv * group, kv),
            (big_h * d.int(16, 96), big_h, big_kv)]
    if LESSON_EXAMPLE in good:                                          # the lesson shows its answer
        good[4] = (LESSON_EXAMPLE[0] * 3, LESSON_EXAMPLE[1], LESSON_EXAMPLE[2])
    bad: list[Size] = []
    while len(bad) < 2:
        D, H = d.int(5, 200), d.int(2, 12)
        if D % H:
            bad.append((D, H, d.choice([k for k in range(1, H + 1) if H % k == 0])))
    while len(bad) < 4:
        H, KV = d.int(3, 12), d.int(2, 16)
        if H % KV:
            bad.append((H * d.int(2, 16), H, KV))
    return good, bad


def probe_mha_size(fn: Callable, *, seed: int) -> dict:
    good, bad = _size_cases(seed)
    results = {"source": source_of(fn), "references": references(fn)}
    for i, size in enumerate(good):
        results[f"case{i}"] = outcome = attempt(fn, *size)
        if outcome.get("value") is None:
            return results
    for i, size in enumerate(bad):
        results[f"bad{i}"] = attempt(fn, *size)
    return results


@functools.lru_cache(maxsize=4096)      # a pure function of three ints: each size is built once
def _size_of(D: int, H: int, KV: int) -> tuple[int, int]:
    """(d_k, number of parameters): torch's nn.Linear layers of GQA's shapes, on the meta device."""
    d_k = D // H
    with torch.device("meta"):
        projections = (nn.Linear(D, D), nn.Linear(D, KV * d_k), nn.Linear(D, KV * d_k), nn.Linear(D, D))
    return d_k, sum(p.numel() for layer in projections for p in layer.parameters())   # W_Q, W_K, W_V, W_O


def _fields(D: int, H: int, KV: int) -> dict:
    return {"d_model": D, "h": H, "num_kv_heads": KV}


@judging
def judge_mha_size(results: dict, *, seed: int) -> Diagnosis:
    good, bad = _size_cases(seed)
    for i, size in enumerate(good):
        fields = _fields(*size)
        d_k, n = _size_of(*size)
        got = value_of(results, f"case{i}")
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        got_dk, got_n = number(got[0]), number(got[1])
        if got_dk is None or got_n is None:
            return False, "l02.hint.size_format", {"got": repr(got)[:60]}
        if got_dk != d_k:
            return False, "l02.hint.size_dk", {**fields, "got": got_dk}
        if got_n != n:
            return _count_mistake(results, good, i, got_n)
        if not all(isinstance(v, int) and not isinstance(v, bool) for v in got):
            return False, "l02.hint.size_int", {**fields, "got": repr(tuple(got))}
    for i, (D, H, KV) in enumerate(bad):
        fields = _fields(D, H, KV)
        outcome = results.get(f"bad{i}")
        error = outcome.get("error") if isinstance(outcome, dict) else None
        if not isinstance(outcome, dict) or outcome.get("not_done") or (error is not None and not isinstance(error, dict)):
            raise Verdict(False, "ex.no_result")
        if error is None:                                               # a result (None included), not an error
            return False, ("l02.hint.size_divisible" if D % H else "l02.hint.size_divisible_kv"), fields
        types = error.get("types") if isinstance(error.get("types"), (list, tuple)) else []
        if "ValueError" in types:
            continue
        if "AssertionError" in types:
            return False, "l02.hint.size_assert", fields
        return False, "l02.hint.size_raise_type", {**fields, "error": str(error.get("type", "?"))[:60]}
    used = forbidden_use(results, _LAYERS)
    if used:
        return False, "l02.hint.size_built_layer", {"name": used}
    return True, "l02.ok.size", {}


def _miscounts(D: int, H: int, KV: int) -> dict[str, set]:
    """The typical miscounts: hint -> the counts that mistake gives for (d_model, h, num_kv_heads).
    Each gives the right count where it is harmless (K and V as wide as d_model when num_kv_heads == h,
    num_kv_heads wide when d_k = 1, one head), so that "every case agrees" can tell them apart."""
    w = KV * (D // H)                                                   # the width of K and V
    right = 2 * (D * D + D) + 2 * (D * w + w)
    return {
        "l02.hint.size_kv_full": {4 * (D * D + D)},                     # W_K, W_V as d_model × d_model
        "l02.hint.size_kv_width": {2 * (D * D + D) + 2 * (D * KV + KV)},   # num_kv_heads wide, not num_kv_heads · d_k
        "l02.hint.size_scales_h": {H * right, H * 4 * (D * D + D), H * 4 * D * D} if H > 1 else {right},
        "l02.hint.size_no_bias": {2 * D * D + 2 * D * w},
        "l02.hint.size_no_wo": {(D * D + D) + 2 * (D * w + w), D * D + 2 * D * w},
    }


def _count_mistake(results: dict, good: list, i: int, got_n) -> Diagnosis:
    """The miscount that gives ``got_n`` for case ``i`` and the student's counts of the other cases
    too: one case alone can match two (for d_model = 3, 4 d² = 3 (d² + d); with num_kv_heads == h and
    d_k = 2, a forgotten W_O gives what K and V num_kv_heads wide give)."""
    counts = {}
    for j, size in enumerate(good):
        outcome = results.get(f"case{j}")
        value = outcome.get("value") if isinstance(outcome, dict) else None
        if isinstance(value, (tuple, list)) and len(value) == 2 and number(value[1]) is not None:
            counts[size] = number(value[1])
    matching = [key for key, given in _miscounts(*good[i]).items() if got_n in given]
    everywhere = [key for key in matching if all(n in _miscounts(*size)[key] for size, n in counts.items())]
    if matching:
        return False, (everywhere or matching)[0], _fields(*good[i])
    return False, "l02.hint.size_count", {**_fields(*good[i]), "got": got_n}


SIZE = Exercise("l02.mha_size", "l02.ex.mha_size", ("my_mha_size",), probe_mha_size, judge_mha_size)


def evaluate_mha_size(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Check ``fn(d_model, num_heads, num_kv_heads) -> (d_k, number of parameters)`` of grouped-query
    attention by the formula (without building a layer); ``fn`` must raise ValueError when d_model
    is not divisible by num_heads or num_heads by num_kv_heads."""
    return evaluate_exercise(SIZE, (fn,), lang, seed)

check_mha_size = printing(evaluate_mha_size)
