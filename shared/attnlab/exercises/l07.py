"""Exercise checkers for lesson 07 (training a tiny Transformer).

- ``check_loss_mask(fn)``:  ``fn(inputs (B, T), targets (B, T)) -> (B, T)`` bool, True where the
  loss counts: the target is a reversed digit (from the separator on, padding excluded).
- ``check_forward(fn, model)``: ``fn(model, ids (B, T)) -> logits (B, T, vocab)``, the model's
  forward pass written by hand, with the causal mask (``l07_forward``).
- ``check_reversal_head(model, answer)``: ``answer = (layer, head)`` counted from 1 as in the
  figure titles; right if that head puts at least ``ANTI_DIAGONAL_THRESHOLD`` of its weight on
  the mirror position.

Sizes are drawn from the seed (several lengths, B != T, never only the lesson's 16 positions). The
probes record the lesson's model as data (``_models``), the judges rebuild it and decide.
"""
from __future__ import annotations

import torch

from .. import reversal
from ._common import Draw, Exercise, Feedback, evaluate_exercise, is_tensor, judging, kind, printing, value_of
from ._common import shape as _shape
from ._models import model_data, reversal_from
from ._outcomes import answer_outcome, numpy_returned, pair, typed_attempt
from .l07_forward import FORWARD, evaluate_forward, forward_cases, judge_forward, manual_forward, probe_forward  # noqa: F401


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


# ------------------------------------------------------------------------------------ which head
def echo_map(ids: torch.Tensor) -> torch.Tensor:
    """(B, T, T) bool: True at (query t, key 2n - t) for t = n .. 2n - 1: the anti-diagonal shifted one
    column right, where each target query finds the source original of its own input token."""
    n = reversal.lengths(ids)[:, None, None]
    T = ids.shape[1] - 1
    q = torch.arange(T)[None, :, None]
    k = torch.arange(T)[None, None, :]
    return (q >= n) & (q < 2 * n) & (q + k == 2 * n)


def probe_reversal_head(model, answer, *, seed: int) -> dict:
    return {"answer": answer_outcome(answer), "model": model_data(model)}


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

check_forward = printing(evaluate_forward)

EXERCISES = (LOSS_MASK, FORWARD, HEAD)