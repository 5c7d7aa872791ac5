"""Exercise checkers for lesson 07 (training a tiny Transformer).

- ``check_loss_mask(fn)``:  ``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool, True where the
  loss counts: the target is a reversed digit (from the separator on, padding excluded).
- ``check_forward(fn, model)``: ``fn(model, ids (B, T)) -> logits (B, T, vocab)``, the model's
  forward pass written by hand, with the causal mask. The checker hands ``fn`` a copy of the
  model whose own mask is off (``causal=False``) and whose blocks record the mask they are given,
  so the mask must come from ``fn`` and a wrong one is named by what it is; it tests for leaks:
  changing a later token must not change an earlier prediction.
- ``check_reversal_head(model, answer)``: ``answer = (layer, head)`` counted from 1 as in the
  figure titles; right if that head puts at least ``ANTI_DIAGONAL_THRESHOLD`` of its weight on
  the mirror position.

Sizes are drawn from the seed (several lengths, B != T, never only the lesson's 16 positions). The
probes record the lesson's model as data (``_models``), the judges rebuild it and decide.
"""
from __future__ import annotations

import copy
import numbers

import torch
import torch.nn as nn

from .. import reversal
from ..masks import causal_mask
from ._common import (Draw, Exercise, Feedback, Verdict, attempt, evaluate_exercise, is_tensor, judging, kind,
                      printing, raises, to_data, value_of)
from ._common import shape as _shape
from ._models import model_data, reversal_from
from ._typed import numpy_returned, typed_attempt


def _first(mask: torch.Tensor) -> dict:
    """Row and position of the first True of a (B, T) mask."""
    b, pos = (int(i) for i in mask.nonzero()[0])
    return {"b": b, "pos": pos}


# ------------------------------------------------------------------------------------ loss mask
def loss_mask_cases(seed: int) -> list[torch.Tensor]:
    """Full rows: some of the lesson's held-out rows, every length from 1 up to a drawn maximum (no
    padding at the longest), a shorter context; B != T in each."""
    d = Draw(seed, "l07.loss_mask")
    held = reversal.heldout()
    rows = held[d.perm(len(held))[:d.choice([n for n in range(24, 49) if n != held.shape[1] - 1])]]
    cases = [rows]
    for low, high in ((1, d.int(8, 10)), (2, d.int(3, 5))):          # every length 1..8 (the lesson says so)
        config = reversal.TinyConfig(min_len=low, max_len=high)
        B = d.choice([n for n in range(20, 41) if n != 2 * high])
        cases.append(reversal.make_batch(B, d.g, config))
    return cases


def probe_loss_mask(fn, *, seed: int) -> dict:
    results = {}
    for i, ids in enumerate(loss_mask_cases(seed)):
        inputs, targets = reversal.split(ids)
        results[f"case{i}"] = outcome = typed_attempt(fn, inputs.clone(), targets.clone())
        if "value" not in outcome or outcome["value"] is None:
            break
    return results


def _starts(mask: torch.Tensor) -> torch.Tensor:
    """(B,) the position of each row's first True (-1 for a row without one)."""
    any_true = mask.any(1)
    return torch.where(any_true, mask.float().argmax(1), torch.full_like(any_true, -1, dtype=torch.long))


@judging
def judge_loss_mask(results: dict, *, seed: int):
    for i, ids in enumerate(loss_mask_cases(seed)):
        inputs, targets = reversal.split(ids)
        got = value_of(results, f"case{i}")
        if not is_tensor(got) or numpy_returned(results, f"case{i}"):
            return False, "l07.hint.not_tensor", {"got": "ndarray" if is_tensor(got) else kind(got)}
        B, T = inputs.shape
        if tuple(got.shape) != (B, T):
            key = "l07.hint.mask_shape_full" if tuple(got.shape) == tuple(ids.shape) else "l07.hint.mask_shape"
            return False, key, {"got": _shape(got.shape), "expected": _shape((B, T))}
        if got.dtype != torch.bool:
            return False, "l07.hint.mask_dtype", {"got": str(got.dtype)}
        want = reversal.loss_mask(inputs, targets)
        if torch.equal(got, want):
            continue
        n = reversal.lengths(ids)[:, None]                   # (B, 1)
        pos = torch.arange(T)[None]                          # (1, T)
        source, sep_pred, pad = pos < n - 1, pos == n - 1, pos >= 2 * n
        extra, missing = got & ~want, want & ~got
        starts, lengths = _starts(got), n[:, 0]
        started = starts >= 0
        if torch.equal(got, ~want):
            return False, "l07.hint.mask_inverted", {}
        if not got.any():
            return False, "l07.hint.mask_none", {}
        if (extra & source).any() and (extra & pad).any() and not missing.any():
            return False, "l07.hint.mask_all", {}
        if (got == got[:1]).all() and not (want == want[:1]).all():
            return False, "l07.hint.mask_fixed", {}
        if started.sum() > 1 and len(set(starts[started].tolist())) == 1 and int(starts[started][0]) > 0 \
                and len(set(lengths[started].tolist())) > 1:
            return False, "l07.hint.mask_fixed", {}              # one start for every row: a number, not n
        if (extra & source).any():
            return False, "l07.hint.mask_source", _first(extra & source)
        if (extra & sep_pred).any() and bool((starts[started] == lengths[started] - 1).all()):
            return False, "l07.hint.mask_early", _first(extra & sep_pred)
        if bool((starts[started] == lengths[started] + 1).all()) and (missing & (pos == n)).any():
            return False, "l07.hint.mask_late", _first(missing & (pos == n))
        if (extra & pad).any():
            return False, "l07.hint.mask_padding", _first(extra & pad)
        return False, "l07.hint.mask_missing", _first(missing) if missing.any() else _first(extra)
    return True, "l07.ok.loss_mask", {}


LOSS_MASK = Exercise("l07.loss_mask", "l07.ex.loss_mask", ("my_loss_mask",), probe_loss_mask, judge_loss_mask)


def evaluate_loss_mask(fn, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool: where the loss counts."""
    return evaluate_exercise(LOSS_MASK, (fn,), lang, seed)

check_loss_mask = printing(evaluate_loss_mask)


# -------------------------------------------------------------------------------------- forward
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

check_forward = printing(evaluate_forward)


# ------------------------------------------------------------------------------------ which head
def echo_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool: True at (query t, key 2n - t) for t = n .. 2n - 1: the anti-diagonal shifted one
    column right, where each target query finds the source original of its own input token."""
    n = reversal.lengths(ids)[:, None, None]
    T = ids.shape[1] - 1
    q = torch.arange(T)[None, :, None]
    k = torch.arange(T)[None, None, :]
    return (q >= n) & (q < 2 * n) & (q + k == 2 * n)


def answer_outcome(answer) -> dict:
    """The student's answer (a value, not code) recorded as an outcome: None or ``...`` is not done."""
    return {"not_done": True} if answer is None or answer is Ellipsis else {"value": to_data(answer)}


def probe_reversal_head(model, answer, *, seed: int) -> dict:
    return {"answer": answer_outcome(answer), "model": model_data(model)}


def pair(answer) -> tuple[int, int] | None:
    """(layer, head) from a pair of integers (a tuple or a list), else None."""
    if not isinstance(answer, (tuple, list)) or len(answer) != 2 \
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer):
        return None
    return int(answer[0]), int(answer[1])


@judging
def judge_reversal_head(results: dict, *, seed: int):
    answer = value_of(results, "answer")
    got = pair(answer)
    if got is None:
        return False, "l07.hint.head_format", {"got": repr(answer)[:60]}
    model = reversal_from(results.get("model"))
    layer, head = got
    L, H = model.config.num_layers, model.config.num_heads
    mass = reversal.antidiagonal_mass(model)                          # (L, H)
    need = reversal.ANTI_DIAGONAL_THRESHOLD

    def good(l, h):
        return 1 <= l <= L and 1 <= h <= H and float(mass[l - 1, h - 1]) >= need

    if good(layer, head):
        pct = round(100 * float(mass[layer - 1, head - 1]))
        return True, "l07.ok.head", {"layer": layer, "head": head, "pct": pct}
    if good(layer + 1, head + 1):                                   # Python indices, counted from 0
        return False, "l07.hint.head_zero_based", {}
    if not (1 <= layer <= L and 1 <= head <= H):
        return False, "l07.hint.head_range", {"layers": L, "heads": H, "layer": layer, "head": head}
    pct = round(100 * float(mass[layer - 1, head - 1]))
    if float(reversal.attention_mass(model, echo_map)[layer - 1, head - 1]) >= need:
        return False, "l07.hint.head_shifted", {"layer": layer, "head": head}
    if float(mass[layer - 1].max()) < need:
        return False, "l07.hint.head_layer", {"layer": layer}
    return False, "l07.hint.head_other", {"layer": layer, "head": head, "pct": pct, "need": round(100 * need)}


HEAD = Exercise("l07.reversal_head", "l07.ex.head", ("my_head",), probe_reversal_head, judge_reversal_head,
                args=("model", "my_head"), discussion="l07.discuss.head")


def evaluate_reversal_head(model, answer, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``answer = (layer, head)``, counted from 1: a head whose weight sits on the mirror position."""
    return evaluate_exercise(HEAD, (model, answer), lang, seed)

check_reversal_head = printing(evaluate_reversal_head)

EXERCISES = (LOSS_MASK, FORWARD, HEAD)
