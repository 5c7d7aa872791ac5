"""Exercise checkers for lesson 07 (training a tiny Transformer).

- ``check_loss_mask(fn)``:  ``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool, True where the
  loss counts: the target is a reversed digit (from the separator on, padding excluded).
- ``check_forward(fn, model)``: ``fn(model, ids (B, T)) -> logits (B, T, vocab)``, the model's
  forward pass written by hand, with the causal mask. The checker hands ``fn`` a copy of the
  model whose own mask is off (``causal=False``), so the mask must come from ``fn``, and it
  tests for leaks: changing a later token must not change an earlier prediction.
- ``check_reversal_head(model, answer)``: ``answer = (layer, head)`` counted from 1 as in the
  figure titles; right if that head puts at least ``ANTI_DIAGONAL_THRESHOLD`` of its weight on
  the mirror position.

Each checker recognises the typical mistakes and prints a hint for the first one it meets,
never the solution. The ``_diagnose_*`` functions return ``(ok, message key, fields)`` so the
tests can see which hint was chosen.
"""
from __future__ import annotations

import copy
import numbers

import torch

from .. import reversal
from ..masks import causal_mask
from ._common import Feedback, NotDone, call_student, evaluate, printing
from ._common import shape as _shape


def _first(mask: torch.Tensor) -> dict:
    """Row and position of the first True of a (B, T) mask."""
    b, pos = (int(i) for i in mask.nonzero()[0])
    return {"b": b, "pos": pos}


# ------------------------------------------------------------------------------------ loss mask
def _loss_mask_cases() -> list[torch.Tensor]:
    """Full rows: the lesson's held-out rows, every length 1..8 (no padding at n = 8), a shorter context."""
    return [
        reversal.heldout()[:64],
        reversal.make_batch(64, torch.Generator().manual_seed(1), reversal.TinyConfig(min_len=1, max_len=8)),
        reversal.make_batch(32, torch.Generator().manual_seed(2), reversal.TinyConfig(min_len=2, max_len=5)),
    ]


def _diagnose_loss_mask(fn):
    for ids in _loss_mask_cases():
        inputs, targets = reversal.split(ids)
        got = call_student(fn, inputs.clone(), targets.clone())
        if not isinstance(got, torch.Tensor):
            return False, "l07.hint.not_tensor", {"got": type(got).__name__}
        got = got.detach().cpu()
        B, T = inputs.shape
        if tuple(got.shape) != (B, T):
            key = "l07.hint.mask_shape_full" if tuple(got.shape) == tuple(ids.shape) else "l07.hint.mask_shape"
            return False, key, {"got": _shape(got.shape), "expected": _shape((B, T))}
        if got.dtype != torch.bool:
            return False, "l07.hint.mask_dtype", {"got": str(got.dtype)}
        want = reversal.loss_mask(inputs, targets)
        if torch.equal(got, want):
            continue
        n = reversal.lengths(ids)[:, None]                       # (B, 1)
        pos = torch.arange(T)[None]                          # (1, T)
        source, sep_pred, first, pad = pos < n - 1, pos == n - 1, pos == n, pos >= 2 * n
        extra, missing = got & ~want, want & ~got
        if torch.equal(got, ~want):
            return False, "l07.hint.mask_inverted", {}
        if not got.any():
            return False, "l07.hint.mask_none", {}
        if (extra & source).any() and (extra & pad).any() and not missing.any():
            return False, "l07.hint.mask_all", {}
        if (got == got[:1]).all() and not (want == want[:1]).all():
            return False, "l07.hint.mask_fixed", {}
        if (extra & source).any():
            return False, "l07.hint.mask_source", _first(extra & source)
        if (extra & sep_pred).any():
            return False, "l07.hint.mask_early", _first(extra & sep_pred)
        if (missing & first).any():
            return False, "l07.hint.mask_late", _first(missing & first)
        if (extra & pad).any():
            return False, "l07.hint.mask_padding", _first(extra & pad)
        return False, "l07.hint.mask_missing", _first(missing)
    return True, "l07.ok.loss_mask", {}


def evaluate_loss_mask(fn, lang: str | None = None) -> Feedback:
    """``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool: where the loss counts."""
    return evaluate("l07.ex.loss_mask", lambda: _diagnose_loss_mask(fn), lang)

check_loss_mask = printing(evaluate_loss_mask)


# -------------------------------------------------------------------------------------- forward
def _manual_forward(model, ids, mask, positions: bool = True, final_norm: bool = True) -> torch.Tensor:
    x = model.embed(ids)
    if positions:
        x = model.pos(x)
    for block in model.blocks:
        x, _ = block(x, mask=mask)
    return model.head(model.norm(x) if final_norm else x)


def _leak(fn, probe, inputs, j: int):
    """Change the token at position j; return the first (row, position < j) whose logits moved, or None."""
    changed = inputs.clone()
    changed[:, j] = (changed[:, j] + 1) % 10
    with torch.no_grad():
        a = call_student(fn, probe, inputs.clone())
        b = call_student(fn, probe, changed)
    moved = ((a[:, :j] - b[:, :j]).abs().amax(-1) > 1e-5)        # (B, j)
    return _first(moved) if moved.any() else None


def _diagnose_forward(fn, model):
    ref = copy.deepcopy(model).cpu().float().eval()
    ref.causal = True
    probe = copy.deepcopy(ref)
    probe.causal = False                 # the student's function must bring its own mask
    inputs, _ = reversal.split(reversal.heldout(ref.config)[:16])
    B, T = inputs.shape
    real = inputs != reversal.PAD            # compare where there is a real token (padding rows are free)
    with torch.no_grad():
        try:
            got = call_student(fn, probe, inputs.clone())
        except (TypeError, AttributeError) as err:      # x = block(x, mask): a block returns (x, weights)
            if "tuple" in str(err):
                return False, "l07.hint.fwd_block_tuple", {}
            raise
        want, _ = ref(inputs)
    if isinstance(got, tuple):
        return False, "l07.hint.fwd_tuple", {}
    if not isinstance(got, torch.Tensor):
        return False, "l07.hint.not_tensor", {"got": type(got).__name__}
    got = got.detach().float().cpu()
    expected = (B, T, ref.config.vocab_size)
    if tuple(got.shape) != expected:
        return False, "l07.hint.fwd_shape", {"got": _shape(got.shape), "expected": _shape(expected)}

    def close(other):
        return torch.allclose(got[real], other[real], atol=1e-4, rtol=1e-4)

    if close(want):
        leak = _leak(fn, probe, inputs, j=T // 2)
        if leak is None:
            return True, "l07.ok.forward", {}
        return False, "l07.hint.fwd_leak", {"j": T // 2, **leak}
    causal = causal_mask(T)
    with torch.no_grad():
        if close(_manual_forward(ref, inputs, None)):
            return False, "l07.hint.fwd_no_mask", {}
        if close(_manual_forward(ref, inputs, ~causal)) or close(_manual_forward(ref, inputs, causal.transpose(-2, -1))):
            return False, "l07.hint.fwd_inverted", {}
        leak = _leak(fn, probe, inputs, j=T // 2)
        if leak is not None:
            return False, "l07.hint.fwd_leak", {"j": T // 2, **leak}
        if close(_manual_forward(ref, inputs, causal, positions=False)):
            return False, "l07.hint.fwd_no_pos", {}
        if close(_manual_forward(ref, inputs, causal, final_norm=False)):
            return False, "l07.hint.fwd_no_norm", {}
    diff = (got[real] - want[real]).abs().max().item()
    return False, "l07.hint.fwd_values", {"diff": diff}


def evaluate_forward(fn, model, lang: str | None = None) -> Feedback:
    """``fn(model, ids (B, T)) -> logits (B, T, vocab)``: the forward pass by hand, causal mask included."""
    return evaluate("l07.ex.forward", lambda: _diagnose_forward(fn, model), lang)

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


def _diagnose_reversal_head(model, answer):
    if answer is None or answer is Ellipsis:
        raise NotDone
    if (not isinstance(answer, (tuple, list)) or len(answer) != 2
            or not all(isinstance(v, numbers.Integral) and not isinstance(v, bool) for v in answer)):
        return False, "l07.hint.head_format", {"got": repr(answer)}
    layer, head = (int(v) for v in answer)
    L, H = model.config.num_layers, model.config.num_heads
    mass = reversal.antidiagonal_mass(model)                              # (L, H)
    need = reversal.ANTI_DIAGONAL_THRESHOLD

    def good(l, h):
        return 1 <= l <= L and 1 <= h <= H and float(mass[l - 1, h - 1]) >= need

    if not (1 <= layer <= L and 1 <= head <= H):
        if 0 in (layer, head) and good(layer + 1, head + 1):        # Python indices, counted from 0
            return False, "l07.hint.head_zero_based", {}
        return False, "l07.hint.head_range", {"layers": L, "heads": H, "layer": layer, "head": head}
    pct = round(100 * float(mass[layer - 1, head - 1]))
    if good(layer, head):
        return True, "l07.ok.head", {"layer": layer, "head": head, "pct": pct}
    if float(reversal.attention_mass(model, echo_map)[layer - 1, head - 1]) >= need:
        return False, "l07.hint.head_shifted", {"layer": layer, "head": head}
    if float(mass[layer - 1].max()) < need:
        return False, "l07.hint.head_layer", {"layer": layer}
    return False, "l07.hint.head_other", {"layer": layer, "head": head, "pct": pct, "need": round(100 * need)}


def evaluate_reversal_head(model, answer, lang: str | None = None) -> Feedback:
    """``answer = (layer, head)``, counted from 1: a head whose weight sits on the mirror position."""
    return evaluate("l07.ex.head", lambda: _diagnose_reversal_head(model, answer), lang,
                    discussion="l07.discuss.head")

check_reversal_head = printing(evaluate_reversal_head)
