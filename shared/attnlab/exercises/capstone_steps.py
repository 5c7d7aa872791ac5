"""Lesson 09's stepwise checks: the four steps of multi-head attention, one function each, before
the whole class; and the student's block plugged into lesson 07's trained model.

* ``check_split(fn)``: ``fn(x, num_heads)``, (B, L, D) -> (B, H, L, d_k).
* ``check_scores(fn)``: ``fn(q, k)``, (B, H, T, d_k) and (B, H, S, d_k) -> (B, H, T, S) = q kᵀ / √d_k.
* ``check_mask(fn)``: ``fn(scores, mask)`` -> the scores with every cell where the bool ``mask`` is
  False pushed to -inf (or a very negative number): compared after the softmax, on rows that keep
  at least one key (a fully masked row is attnlab's business: it returns zeros there, not NaN);
  returning the weights (the softmax taken already) has its own hint.
* ``check_merge(fn)``: ``fn(x)``, (B, H, T, d_k) -> (B, T, D), the inverse of the split.
* ``check_in_tiny_model(cls)``: ``cls`` is the student's ``TransformerBlock`` (capstone exercise 2);
  blocks of that class, with the weights of lesson 07's checkpoint, replace its blocks; the model
  must reverse the held-out sequences exactly as the checkpoint does, and the accuracy is printed.
  At these sizes (d_model 32, 4 heads) a size written as a number in exercise 1 or 2 shows: the
  hint names the exercise it is in.

Every size is drawn from the seed (heads and d_k never the lesson's 3 and 4). Each check is a probe
and a judge (``probe_x`` / ``judge_x``); ``evaluate_x`` words the verdict, ``check_x`` prints it.
The words are in ``messages/capstone_steps.json``.
"""
from __future__ import annotations

import copy
import math

import torch
import torch.nn as nn

from ..masks import causal_mask
from ._common import (Draw, Exercise, Feedback, Msg, Verdict, attempt, call_student, evaluate_exercise, is_tensor,
                      judging, printing, value_of)
from ._models import finite_float, model_data, reversal_from
from .capstone_block import block_mistake, block_rename
from .capstone_mha import _close, build, load, mismatched, state_shapes

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


# ----------------------------------------------------------------------------------- lesson 07's model
class _Adapter(nn.Module):
    """The student's block returns x and knows masks only; lesson 07's model calls
    ``block(x, mask=..., need_weights=..., is_causal=...)`` and expects (x, weights)."""

    def __init__(self, block: nn.Module):
        super().__init__()
        self.block = block

    def forward(self, x, mask=None, need_weights=False, is_causal=False, **_):
        if is_causal:
            causal = causal_mask(x.shape[1], device=x.device)
            mask = causal if mask is None else mask & causal
        out = self.block(x, mask=mask)
        return (out[0] if isinstance(out, (tuple, list)) else out), None


_BLOCK_NOT_DONE = "capstone_steps.not_done.tiny"     # this cell has no TODO: the block's exercise is unfinished
HELD = 64                                            # held-out rows whose logits are compared


def _held():
    from .. import reversal
    return reversal.heldout()[:HELD, :-1]


def probe_in_tiny_model(cls, model=None, *, seed: int) -> dict:
    """The student's blocks with the checkpoint's weights: each one's attention sublayer and output on a
    probe input (at the model's sizes), then the whole model's logits and accuracy with them."""
    from .. import reversal
    ref = (reversal.load_pretrained() if model is None else copy.deepcopy(model)).cpu().float().eval()
    c = ref.config
    results: dict = {"model": model_data(ref)}
    x = Draw(seed, "capstone_steps.in_tiny_model").randn(2, 5, c.d_model)
    mask = causal_mask(5)
    blocks = []
    for i, block in enumerate(ref.blocks):
        student, failure = build(cls, c.d_model, c.num_heads, c.d_ff, dropout=0.0, norm_first=block.norm_first)
        if failure is not None:
            results["build"] = failure
            results["block_class"] = str(getattr(cls, "__name__", ""))
            return results
        results[f"names{i}"] = names = attempt(state_shapes, student)
        if "value" not in names:
            return results
        load(student, {block_rename(k): v for k, v in block.state_dict().items()})
        call_student(student.eval)
        with torch.no_grad():
            if isinstance(getattr(student, "attention", None), nn.Module):
                results[f"sublayer{i}"] = attempt(student.attention, x.clone(), mask=mask)
            results[f"block{i}"] = outcome = attempt(student, x.clone(), mask=mask)
        if _stop(outcome):
            return results
        blocks.append(_Adapter(student))
    mine = copy.deepcopy(ref)
    mine.blocks = nn.ModuleList(blocks)
    with torch.no_grad():
        results["logits"] = attempt(lambda ids: mine(ids)[0], _held())
        results["accuracy"] = attempt(reversal.accuracy, mine)
    return results


def _tiny_sizes(c) -> dict:
    return {"d_model": c.d_model, "heads": c.num_heads, "d_k": c.d_model // c.num_heads, "d_ff": c.d_ff,
            "exercise1": Msg("capstone.ex.multihead"), "exercise2": Msg("capstone.ex.block")}


def _not_done(results: dict) -> None:
    for key in ("build", *(f"block{i}" for i in range(16))):
        outcome = results.get(key)
        if isinstance(outcome, dict) and outcome.get("not_done"):
            raise Verdict(None, _BLOCK_NOT_DONE, block=Msg("capstone.ex.block"))   # exercise 2 not written yet


@judging
def judge_in_tiny_model(results: dict, *, seed: int):
    from .. import reversal
    _not_done(results)
    ref = reversal_from(results.get("model"))
    c = ref.config
    sizes = _tiny_sizes(c)
    if "build" in results:                          # the block (or its attention) cannot be built at these sizes
        where = results["build"].get("raised_in") if isinstance(results["build"], dict) else None
        in_attention = isinstance(where, str) and where not in ("", results.get("block_class"))
        value_of(results, "build", errors=lambda error: (False, "capstone_steps.hint.tiny_attention", sizes)
                 if in_attention else (False, "capstone_steps.hint.tiny_error",
                                       {**sizes, "error": error["type"], "message": error["message"]}))
    x = Draw(seed, "capstone_steps.in_tiny_model").randn(2, 5, c.d_model)
    mask = causal_mask(5)

    def at_these_sizes(key, hint):
        return lambda error: (False, hint, sizes) if error["type"] in ("RuntimeError", "ValueError", "AssertionError") \
            else None

    with torch.no_grad():
        for i, block in enumerate(ref.blocks):
            wanted = {block_rename(k): v for k, v in block.state_dict().items()}
            if mismatched(value_of(results, f"names{i}"), wanted):
                return False, "capstone.hint.names", {"names": "attention, norm1, norm2, linear1, linear2"}
            if f"sublayer{i}" in results:
                got = value_of(results, f"sublayer{i}", errors=at_these_sizes(i, "capstone_steps.hint.tiny_attention"))
                got = got[0] if isinstance(got, (tuple, list)) and got else got
                if not _close(got, block.attention(x, mask=mask)[0], 1e-4):
                    return False, "capstone_steps.hint.tiny_attention", sizes
            out = value_of(results, f"block{i}", errors=at_these_sizes(i, "capstone_steps.hint.tiny_block"))
            if isinstance(out, (tuple, list)):
                return False, "capstone.hint.block_tuple", {"n": len(out)}
            expected = block(x, mask=mask)[0]
            if not _close(out, expected, 1e-4):
                mistake = block_mistake(block, x, mask, out, expected, block.norm_first) if is_tensor(out) else None
                if mistake and mistake[1] != "capstone.hint.block_mismatch":
                    return mistake                                   # a mistake of the block at any size
                return False, "capstone_steps.hint.tiny_block", sizes
        held = _held()
        logits = value_of(results, "logits")
        accuracy = finite_float(value_of(results, "accuracy"))
        acc_ref = reversal.accuracy(ref)
        fields = {"mine": 100 * (accuracy if accuracy is not None else 0.0), "ref": 100 * acc_ref}
        if not _close(logits, ref(held)[0], 1e-4) or accuracy is None or abs(accuracy - acc_ref) > 0.002:
            return False, "capstone_steps.hint.tiny_differs", fields
    return True, "capstone_steps.ok.tiny", fields


# ----------------------------------------------------------------------------------- public API
SPLIT = Exercise("capstone_steps.split", "capstone_steps.ex.split", ("split_heads",), probe_split, judge_split)
SCORES = Exercise("capstone_steps.scores", "capstone_steps.ex.scores", ("attention_scores",), probe_scores,
                  judge_scores)
MASK = Exercise("capstone_steps.mask", "capstone_steps.ex.mask", ("apply_mask",), probe_mask, judge_mask)
MERGE = Exercise("capstone_steps.merge", "capstone_steps.ex.merge", ("merge_heads",), probe_merge, judge_merge)
IN_TINY_MODEL = Exercise("capstone_steps.in_tiny_model", "capstone_steps.ex.tiny", ("TransformerBlock",),
                         probe_in_tiny_model, judge_in_tiny_model)


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


def evaluate_in_tiny_model(cls, model=None, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """The student's ``TransformerBlock`` in lesson 07's trained model: the same answers, the same accuracy."""
    return evaluate_exercise(IN_TINY_MODEL, (cls, model), lang, seed)


check_split = printing(evaluate_split)
check_scores = printing(evaluate_scores)
check_mask = printing(evaluate_mask)
check_merge = printing(evaluate_merge)
check_in_tiny_model = printing(evaluate_in_tiny_model)

EXERCISES = (SPLIT, SCORES, MASK, MERGE, IN_TINY_MODEL)
