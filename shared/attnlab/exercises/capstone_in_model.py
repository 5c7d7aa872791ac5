"""Lesson 09 §5: the student's block (capstone exercise 2) in lesson 07's trained model
(``capstone_steps.check_in_tiny_model(cls)``).

Blocks of the student's class, with the weights of lesson 07's checkpoint, replace its blocks; the
model must reverse the held-out sequences exactly as the checkpoint does, and the accuracy is
printed. At these sizes (d_model 32, 4 heads) a size written as a number in exercise 1 or 2 shows:
the probe records each block's attention sublayer and output on a short input, so the judge can
name the exercise the mistake is in (its attention, or the block), before comparing the logits.
"""
from __future__ import annotations

import copy

import torch
import torch.nn as nn

from .. import reversal
from ..masks import causal_mask
from ._common import (Draw, Exercise, Feedback, Msg, Verdict, attempt, call_student, evaluate_exercise, is_tensor,
                      judging, value_of)
from ._common import max_diff
from ._models import finite_float, model_data, reversal_from
from .capstone_block import block_mistake, block_rename
from .capstone_weights import _close, build, load, mismatched, state_shapes


def _stop(outcome: dict) -> bool:
    return "value" not in outcome or outcome["value"] is None


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
    return reversal.heldout()[:HELD, :-1]


def probe_in_tiny_model(cls, model=None, *, seed: int) -> dict:
    """The student's blocks with the checkpoint's weights: each one's attention sublayer and output on a
    probe input (at the model's sizes), then the whole model's logits and accuracy with them."""
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


_ACCURACY: dict[tuple, float] = {}


def _reference_accuracy(model) -> float:
    """reversal.accuracy of the rebuilt model, kept per set of weights (a cell run again waits less)."""
    key = tuple((k, float(v.double().sum()), float(v.double().abs().sum())) for k, v in model.state_dict().items())
    if key not in _ACCURACY:
        _ACCURACY[key] = reversal.accuracy(model)
    return _ACCURACY[key]


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
        acc_ref = _reference_accuracy(ref)
        fields = {"mine": 100 * (accuracy if accuracy is not None else 0.0), "ref": 100 * acc_ref}
        want = ref(held)[0]
        if not is_tensor(logits) or logits.shape != want.shape or accuracy is None:
            raise Verdict(False, "ex.no_result")
        if not _close(logits, want, 1e-4) or abs(accuracy - acc_ref) > 0.002:
            return False, "capstone_steps.hint.tiny_differs", {**fields, "diff": max_diff(logits, want)}
    return True, "capstone_steps.ok.tiny", fields

IN_TINY_MODEL = Exercise("capstone_steps.in_tiny_model", "capstone_steps.ex.tiny", ("TransformerBlock",),
                         probe_in_tiny_model, judge_in_tiny_model)


def evaluate_in_tiny_model(cls, model=None, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """The student's ``TransformerBlock`` in lesson 07's trained model: the same answers, the same accuracy."""
    return evaluate_exercise(IN_TINY_MODEL, (cls, model), lang, seed)
