"""Lesson 09's stepwise checks: the four steps of multi-head attention, one function each, before
the whole class; and the student's block plugged into lesson 07's trained model.

* ``check_split(fn)``: ``fn(x, num_heads)``, (B, L, D) -> (B, H, L, d_k).
* ``check_scores(fn)``: ``fn(q, k)``, (B, H, T, d_k) and (B, H, S, d_k) -> (B, H, T, S) = q kᵀ / √d_k.
* ``check_mask(fn)``: ``fn(scores, mask)`` -> the scores with every cell where the bool ``mask`` is
  False pushed to -inf (or a very negative number): compared after the softmax, on rows that keep
  at least one key (a fully masked row is attnlab's business: it returns zeros there, not NaN);
  returning the weights (the softmax taken already) has its own hint.
* ``check_merge(fn)``: ``fn(x)``, (B, H, T, d_k) -> (B, T, D), the inverse of the split.
* ``check_in_tiny_model(cls)``: ``cls`` is the student's ``TransformerBlock`` (capstone exercise 2)
  in lesson 07's trained model (``capstone_in_model``).

Every size is drawn from the seed (heads and d_k never the lesson's 3 and 4). Each check is a probe
and a judge (``probe_x`` / ``judge_x``); ``evaluate_x`` words the verdict, ``check_x`` prints it.
The words are in ``messages/capstone_steps.json``.
"""
from __future__ import annotations

import math

import torch

from ..masks import causal_mask
from ._common import Draw, Exercise, Feedback, attempt, evaluate_exercise, is_tensor, judging, printing, value_of
from .capstone_in_model import IN_TINY_MODEL, evaluate_in_tiny_model, judge_in_tiny_model, probe_in_tiny_model  # noqa: F401
from .capstone_weights import _close

__all__ = ["check_split", "check_scores", "check_mask", "check_merge", "check_in_tiny_model", "EXERCISES"]

HEADS, D_KS = (2, 4, 5, 6), (2, 3, 5, 6, 7)            # never the lesson's 3 heads and d_k = 4


def _shape_hint(got, want, key):
    return False, key, {"got": tuple(got.shape) if is_tensor(got) else type(got).__name__, "want": tuple(want.shape)}


def _stop(outcome: dict) -> bool:
    return "value" not in outcome or outcome["value"] is None


def _probe(fn, cases) -> dict:
    results = {}
    for i, args in enumerate(cases):
        results[f"case{i}"] = outcome = attempt(fn, *(a.clone() if is_tensor(a) else a for a in args))
        if _stop(outcome):
            break
    return results


# ----------------------------------------------------------------------------------- split
def split_cases(seed: int) -> list[tuple[torch.Tensor, int]]:
    d = Draw(seed, "capstone_steps.split")
    cases = []
    for H, d_k in zip(d.sample(HEADS, 2), d.sample(D_KS, 2)):
        B, L = d.int(1, 3), d.choice([n for n in range(3, 8) if n != H])      # L != H: a missing transpose shows
        cases.append((d.randn(B, L, H * d_k), H))
    return cases


def probe_split(fn, *, seed: int) -> dict:
    return _probe(fn, split_cases(seed))


@judging
def judge_split(results: dict, *, seed: int):
    for i, (x, H) in enumerate(split_cases(seed)):
        B, L, D = x.shape
        got, want = value_of(results, f"case{i}"), x.view(B, L, H, D // H).transpose(1, 2)    # (B, H, L, d_k)
        if not is_tensor(got) or got.shape != want.shape:
            return _shape_hint(got, want, "capstone_steps.hint.split_shape")
        if not _close(got, want, 0.0):
            if _close(got, x.view(B, H, L, D // H), 0.0):
                return False, "capstone_steps.hint.split_no_transpose", {}
            return False, "capstone_steps.hint.split_values", {}
    return True, "capstone_steps.ok.split", {}


# ----------------------------------------------------------------------------------- scores
def scores_cases(seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """Two (q, k) with T != S and two different d_k, never the lesson's 4; no size whose square root
    is a number a student may write instead of √d_k (2 or 4: the lesson's d_k and its root), and no
    size equal to d_k or its square: a divisor then names one size only."""
    d = Draw(seed, "capstone_steps.scores")
    cases = []
    for d_k in d.sample((3, 5, 6, 7, 8), 2):
        while True:
            B, H, T, S = d.int(1, 3), d.choice((2, 5, 6)), d.choice((3, 5, 6, 7, 9)), d.choice((3, 5, 6, 7, 9))
            sizes = (T, S, H, H * d_k)
            if T != S and d_k * d_k not in sizes and d_k not in sizes[:3] and not {4, 16} & set(sizes):
                break
        cases.append((d.randn(B, H, T, d_k), d.randn(B, H, S, d_k)))
    return cases


def probe_scores(fn, *, seed: int) -> dict:
    return _probe(fn, scores_cases(seed))


def _divisor(got: torch.Tensor, raw: torch.Tensor) -> float | None:
    """c if ``got`` is ``raw / c`` (least squares, then checked), else None."""
    g, r = got.double(), raw.double()
    if not bool(torch.isfinite(g).all()) or float((g * g).sum()) == 0.0:
        return None
    c = float((r * r).sum() / (g * r).sum()) if float((g * r).sum()) else 0.0
    return c if c > 0 and math.isfinite(c) and _close(g * c, r, 1e-4) else None


@judging
def judge_scores(results: dict, *, seed: int):
    for i, (q, k) in enumerate(scores_cases(seed)):
        B, H, T, d_k = q.shape
        S = k.shape[2]
        got, raw = value_of(results, f"case{i}"), q @ k.transpose(-2, -1)
        want = raw / math.sqrt(d_k)
        if is_tensor(got) and got.shape == (B, H, S, T):
            return False, "capstone_steps.hint.scores_transposed", {}
        if not is_tensor(got) or got.shape != want.shape:
            return _shape_hint(got, want, "capstone_steps.hint.scores_shape")
        if _close(got, want):
            continue
        c = _divisor(got, raw)
        if c is None:
            return False, "capstone_steps.hint.scores_values", {}
        if abs(c - 1) < 1e-3:
            return False, "capstone_steps.hint.scores_no_scale", {}
        if abs(c - d_k) < 1e-3:
            return False, "capstone_steps.hint.scores_dk", {}
        if any(abs(c - math.sqrt(n)) < 1e-3 for n in (T, S, H * d_k, H)):
            return False, "capstone_steps.hint.scores_values", {}
        return False, "capstone_steps.hint.scores_fixed", {"divisor": c, "sqrt_dk": math.sqrt(d_k), "d_k": d_k}
    return True, "capstone_steps.ok.scores", {}


# ----------------------------------------------------------------------------------- mask
def mask_cases(seed: int) -> list[tuple[torch.Tensor, torch.Tensor]]:
    """(scores, mask): a causal mask (T = S), a padding mask (T != S), both combined (&)."""
    d = Draw(seed, "capstone_steps.mask")
    B, H, T = d.int(2, 3), d.choice(HEADS), d.int(4, 7)
    S = T + d.int(1, 3)
    pad_t, pad_s = torch.ones(B, 1, 1, T, dtype=torch.bool), torch.ones(B, 1, 1, S, dtype=torch.bool)
    pad_t[1:, ..., d.int(2, T - 1):] = False
    pad_s[1:, ..., d.int(2, S - 1):] = False
    causal = causal_mask(T)                                            # (1, 1, T, T)
    return [(d.randn(B, H, T, T), causal), (d.randn(B, H, T, S), pad_s), (d.randn(B, H, T, T), causal & pad_t)]


def probe_mask(fn, *, seed: int) -> dict:
    return _probe(fn, mask_cases(seed))


@judging
def judge_mask(results: dict, *, seed: int):
    for i, (scores, mask) in enumerate(mask_cases(seed)):
        got = value_of(results, f"case{i}")
        if not is_tensor(got) or got.shape != scores.shape or not got.is_floating_point():
            return _shape_hint(got, scores, "capstone_steps.hint.mask_shape")
        want = torch.softmax(scores.masked_fill(~mask, float("-inf")), dim=-1)
        mine = torch.softmax(got.double(), dim=-1)
        if _close(mine, want):
            continue
        if _close(got, want):
            return False, "capstone_steps.hint.mask_softmax", {}
        if _close(mine, torch.softmax(scores.masked_fill(mask, float("-inf")), dim=-1)):
            return False, "capstone_steps.hint.mask_inverted", {}
        if _close(got, scores.masked_fill(~mask, 0.0)) or _close(got, scores * mask):
            return False, "capstone_steps.hint.mask_zero", {}
        return False, "capstone_steps.hint.mask_values", {}
    return True, "capstone_steps.ok.mask", {}


# ----------------------------------------------------------------------------------- merge
def merge_cases(seed: int) -> list[tuple[torch.Tensor]]:
    d = Draw(seed, "capstone_steps.merge")
    return [(d.randn(d.int(1, 3), H, d.int(4, 7), d_k),) for H, d_k in zip(d.sample(HEADS, 2), d.sample(D_KS, 2))]


def probe_merge(fn, *, seed: int) -> dict:
    return _probe(fn, merge_cases(seed))


@judging
def judge_merge(results: dict, *, seed: int):
    for i, (x,) in enumerate(merge_cases(seed)):
        B, H, T, d_k = x.shape
        got, want = value_of(results, f"case{i}"), x.transpose(1, 2).reshape(B, T, H * d_k)
        if not is_tensor(got) or got.shape != want.shape:
            return _shape_hint(got, want, "capstone_steps.hint.merge_shape")
        if not _close(got, want, 0.0):
            if _close(got, x.reshape(B, T, H * d_k), 0.0):
                return False, "capstone_steps.hint.merge_no_transpose", {}
            return False, "capstone_steps.hint.merge_values", {}
    return True, "capstone_steps.ok.merge", {}


# ----------------------------------------------------------------------------------- public API
SPLIT = Exercise("capstone_steps.split", "capstone_steps.ex.split", ("split_heads",), probe_split, judge_split)
SCORES = Exercise("capstone_steps.scores", "capstone_steps.ex.scores", ("attention_scores",), probe_scores,
                  judge_scores)
MASK = Exercise("capstone_steps.mask", "capstone_steps.ex.mask", ("apply_mask",), probe_mask, judge_mask)
MERGE = Exercise("capstone_steps.merge", "capstone_steps.ex.merge", ("merge_heads",), probe_merge, judge_merge)


def evaluate_split(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Step 1: ``fn(x, num_heads)`` splits (B, L, D) into (B, H, L, d_k)."""
    return evaluate_exercise(SPLIT, (fn,), lang, seed)


def evaluate_scores(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Step 2: ``fn(q, k)`` -> the scaled scores (B, H, T, S)."""
    return evaluate_exercise(SCORES, (fn,), lang, seed)


def evaluate_mask(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Step 3: ``fn(scores, mask)`` -> the scores with the masked cells at -inf (mask: True = may attend)."""
    return evaluate_exercise(MASK, (fn,), lang, seed)


def evaluate_merge(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """Step 4: ``fn(x)`` merges (B, H, T, d_k) back into (B, T, D)."""
    return evaluate_exercise(MERGE, (fn,), lang, seed)


check_split = printing(evaluate_split)
check_scores = printing(evaluate_scores)
check_mask = printing(evaluate_mask)
check_merge = printing(evaluate_merge)
check_in_tiny_model = printing(evaluate_in_tiny_model)

EXERCISES = (SPLIT, SCORES, MASK, MERGE, IN_TINY_MODEL)
