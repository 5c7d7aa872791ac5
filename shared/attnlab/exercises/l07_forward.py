"""Lesson 07, exercise 2: the model's forward pass by hand, with the causal mask (``l07.check_forward``).

``fn(model, ids (B, T)) -> logits (B, T, vocab)``. The checker hands ``fn`` a copy of the model whose
own mask is off (``causal=False``) and whose blocks record the mask they are given, so the mask must
come from ``fn`` and a wrong one is named by what it is (2-D, sized by the batch or by a number,
without the diagonal, a window); it tests for leaks: changing a later token must not change an
earlier prediction. Two batches per run, B != T, one of them shorter than the lesson's 16 positions.
"""
from __future__ import annotations

import copy

import torch
import torch.nn as nn

from .. import reversal
from ..masks import causal_mask
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, evaluate_exercise, is_tensor, judging, kind, raises,
                      to_data, value_of)
from ._common import shape as _shape
from ._models import model_data, reversal_from
from ._outcomes import numpy_returned, typed_attempt


def _first(mask: torch.Tensor) -> dict:
    """Row and position of the first True of a (B, T) mask."""
    b, pos = (int(i) for i in mask.nonzero()[0])
    return {"b": b, "pos": pos}


class _Spy(nn.Module):
    """One of the model's blocks, recording the mask the student's forward gives it."""

    def __init__(self, block: nn.Module, log: list):
        super().__init__()
        self.block, self.log = block, log

    def __getattr__(self, name):                     # block.attention, block.norm1, ...: the real block's
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["block"], name)

    def forward(self, x, *args, **kwargs):
        mask = args[0] if args else kwargs.get("mask")
        self.log.append(to_data(mask))
        return self.block(x, *args, **kwargs)


def forward_cases(seed: int, context: int = 16) -> list[torch.Tensor]:
    """Two batches of inputs (B, T): a shorter context drawn per run and the lesson's full length,
    B != T in each (a mask of size B, or a number, shows)."""
    d = Draw(seed, "l07.forward")
    m = d.int(4, min(7, context // 2 - 1))
    short = reversal.make_batch(d.choice([n for n in range(5, 13) if n != 2 * m]), d.g,
                                reversal.TinyConfig(min_len=2, max_len=m))
    held = reversal.heldout()
    full = held[d.perm(len(held))[:d.choice([n for n in range(5, 13) if n != held.shape[1] - 1])]]
    return [reversal.split(short)[0], reversal.split(full)[0]]


def probe_forward(fn, model, *, seed: int) -> dict:
    """The student's forward on each batch (and on the batch with one later token changed), with a
    copy of the model whose own mask is off and whose blocks record the masks they are given."""
    probe = copy.deepcopy(model).cpu().float().eval()
    probe.causal = False                 # the student's function must bring its own mask
    results = {"model": model_data(probe)}
    for i, ids in enumerate(forward_cases(seed, probe.config.context)):
        log: list = []
        probe.blocks = nn.ModuleList(_Spy(b.block if isinstance(b, _Spy) else b, log) for b in probe.blocks)
        with torch.no_grad():
            results[f"case{i}"] = outcome = typed_attempt(fn, probe, ids.clone())
            results[f"masks{i}"] = list(log)
            changed = ids.clone()
            j = ids.shape[1] // 2
            changed[:, j] = (changed[:, j] + 1) % 10
            results[f"leak{i}"] = attempt(fn, probe, changed)
        if "value" not in outcome or outcome["value"] is None:
            break
    return results


def manual_forward(model, ids, mask, positions: bool = True, final_norm: bool = True) -> torch.Tensor:
    x = model.embed(ids)
    if positions:
        x = model.pos(x)
    for block in model.blocks:
        x, _ = block(x, mask=mask)
    return model.head(model.norm(x) if final_norm else x)


def _leak(results: dict, i: int, got: torch.Tensor, j: int):
    """The first (row, position < j) whose logits moved when the token at j changed, or None."""
    other = value_of(results, f"leak{i}")
    if not is_tensor(other) or other.shape != got.shape:
        raise Verdict(False, "ex.no_result")
    moved = (got[:, :j].double() - other[:, :j].double()).abs().amax(-1) > 1e-5     # (B, j)
    return _first(moved) if moved.any() else None


def mask_size_problem(masks, B: int, T: int):
    """The hint for a mask of the wrong rank or size among those the blocks were given, or None."""
    for mask in masks if isinstance(masks, list) else []:
        if is_tensor(mask) and mask.dim() == 2:
            return False, "l07.hint.fwd_mask_2d", {"got": _shape(mask)}
        if is_tensor(mask) and mask.dim() >= 2 and tuple(mask.shape[-2:]) != (T, T):
            n = int(mask.shape[-1])
            if n == B and n != T:
                return False, "l07.hint.fwd_mask_batch", {"B": B, "T": T}
            return False, "l07.hint.fwd_mask_size", {"got": n, "T": T}
    return None


def mask_content_problem(masks, B: int, T: int, real: torch.Tensor):
    """What is wrong with the masks the blocks were given (all of the right size), or None if each
    lets every real query see exactly the real keys up to itself (a decoder mask is right too)."""
    if not isinstance(masks, list) or not masks:
        return None
    causal = causal_mask(T)[0, 0]                                          # (T, T)
    seen = real[:, None, :] & real[:, :, None]                            # (B, T, T): real query, real key
    found = []
    for mask in masks:
        if mask is None:
            found.append("none")
            continue
        if not is_tensor(mask) or mask.dtype != torch.bool:
            return None
        try:
            m = mask.expand(B, 1, T, T)[:, 0]                             # (B, T, T)
        except RuntimeError:
            return None
        if torch.equal(m & seen, causal & seen):
            found.append("ok")
        elif bool(m[seen].all()):
            found.append("none")
        elif torch.equal(m & seen, ~causal & seen) or torch.equal(m & seen, causal.T & seen):
            found.append("inverted")
        elif torch.equal(m & seen, causal.tril(-1) & seen):
            found.append("diagonal")
        elif not bool((m & ~causal & seen).any()):
            found.append("past")
        else:
            found.append("leak")
    if all(f == "none" for f in found):
        return False, "l07.hint.fwd_no_mask", {}
    for f, key in (("inverted", "l07.hint.fwd_inverted"), ("diagonal", "l07.hint.fwd_no_diagonal"),
                   ("past", "l07.hint.fwd_mask_past")):
        if f in found:
            return False, key, {}
    return None


def _forward_errors(masks, B, T):
    def hint(error):
        problem = mask_size_problem(masks, B, T)
        if problem:
            return problem
        if (raises(error, "TypeError") or raises(error, "AttributeError")) and "tuple" in error["message"]:
            return False, "l07.hint.fwd_block_tuple", {}          # x = block(x, mask): a block returns (x, weights)
        return None
    return hint


@judging
def judge_forward(results: dict, *, seed: int):
    ref = reversal_from(results.get("model"))
    ref.causal = True
    for i, inputs in enumerate(forward_cases(seed, ref.config.context)):
        B, T = inputs.shape
        masks = results.get(f"masks{i}")
        got = value_of(results, f"case{i}", errors=_forward_errors(masks, B, T))
        if isinstance(got, tuple):
            return False, "l07.hint.fwd_tuple", {}
        if not is_tensor(got) or not got.is_floating_point() or numpy_returned(results, f"case{i}"):
            return False, "l07.hint.not_tensor", {"got": "ndarray" if is_tensor(got) else kind(got)}
        expected = (B, T, ref.config.vocab_size)
        if tuple(got.shape) != expected:
            return False, "l07.hint.fwd_shape", {"got": _shape(got.shape), "expected": _shape(expected)}
        got = got.float()
        real = inputs != reversal.PAD            # compare where there is a real token (padding rows are free)
        j = T // 2
        with torch.no_grad():
            want, _ = ref(inputs)

            def close(other):
                return torch.allclose(got[real], other[real], atol=1e-4, rtol=1e-4)

            if close(want):
                leak = _leak(results, i, got, j)
                if leak is not None:
                    return False, "l07.hint.fwd_leak", {"j": j, **leak}
                continue
            problem = mask_size_problem(masks, B, T) or mask_content_problem(masks, B, T, real)
            if problem:
                return problem
            causal = causal_mask(T)
            if close(manual_forward(ref, inputs, None)):
                return False, "l07.hint.fwd_no_mask", {}
            if close(manual_forward(ref, inputs, ~causal)) or close(manual_forward(ref, inputs, causal.transpose(-2, -1))):
                return False, "l07.hint.fwd_inverted", {}
            leak = _leak(results, i, got, j)
            if leak is not None:
                return False, "l07.hint.fwd_leak", {"j": j, **leak}
            if close(manual_forward(ref, inputs, causal, positions=False)):
                return False, "l07.hint.fwd_no_pos", {}
            if close(manual_forward(ref, inputs, causal, final_norm=False)):
                return False, "l07.hint.fwd_no_norm", {}
        return False, "l07.hint.fwd_values", {"diff": float((got[real] - want[real]).abs().max())}
    return True, "l07.ok.forward", {}


FORWARD = Exercise("l07.forward", "l07.ex.forward", ("my_forward",), probe_forward, judge_forward,
                   args=("my_forward", "model"))


def evaluate_forward(fn, model, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(model, ids (B, T)) -> logits (B, T, vocab)``: the forward pass by hand, causal mask included."""
    return evaluate_exercise(FORWARD, (fn, model), lang, seed)
