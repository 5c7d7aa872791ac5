"""Lesson 03, exercise 3: predicting cross-attention's output when one of its two inputs is permuted.

``check_predict_permuted_output(fn)``: ``fn(out (B, T, D), perm, permuted)``. ``out`` is the output
of a cross-attention layer (``MultiHeadAttention(D, H, cross=True)``, no positional encoding) for the
queries ``y`` (B, T, D) and the memory ``x`` (B, S, D): ``out = mha(y, x)``. ``permuted`` says which
input was reordered by ``perm``: ``"queries"`` (the output for ``y[:, perm]``: ``out[:, perm]``,
permutation-equivariant) or ``"memory"`` (keys and values together, ``x[:, perm]``: ``out`` itself,
permutation-invariant). The checker runs the real layer for both cases and recognises the typical
mistakes: the wrong axis, the inverse permutation, a flip, the output left in place when the queries
moved, and the output reordered when only the memory moved (cross-attention treated as self-attention).
"""
from __future__ import annotations

from typing import Callable

import torch

from ..multihead import MultiHeadAttention
from ..positional import sinusoidal_encoding
from ._common import (Draw, Exercise, Feedback, Verdict, as_tensor, attempt, changed_inputs, evaluate_exercise,
                      judging, printing, raises, seeded, value_of)
from ._common import shape as _shape
from .l03_table import _close, _tensor

_TOL = 1e-5
QUERIES, MEMORY = "queries", "memory"


def _moving_perm(d: Draw, n: int) -> list[int]:
    """A permutation of n positions that moves every position and is neither its own inverse nor
    the reversal (so the unchanged output, its reverse and the inverse permutation are all wrong)."""
    while True:
        perm = d.perm(n)
        inverse = sorted(range(n), key=perm.__getitem__)
        if all(p != i for i, p in enumerate(perm)) and perm != inverse and perm != list(range(n))[::-1]:
            return perm


def predict_cases(seed: int) -> list[tuple[int, int, int, int, int, list[int], list[int]]]:
    """(B, T, S, D, H, perm of the queries, perm of the memory) drawn from the seed: the memory as long
    as the queries first (an output reordered by the memory's permutation is then recognised by its
    values), then longer (it cannot be indexed so) and shorter (it gives S rows instead of T)."""
    d = Draw(seed, "l03/predict")
    cases = []
    for B, T, extra in ((d.int(2, 3), d.int(4, 7), 0), (1, d.int(3, 5), d.int(1, 3)), (d.int(3, 4), d.int(5, 8), -d.int(1, 2))):
        S = T + extra
        D, H = d.choice([(8, 2), (12, 3), (16, 4), (12, 2)])
        cases.append((B, T, S, D, H, _moving_perm(d, T), _moving_perm(d, S)))
    return cases


def predict_data(seed: int, i: int, B: int, T: int, S: int, D: int, H: int, perm_q: list[int], perm_m: list[int]) -> dict:
    """The layer's outputs: ``out`` = mha(y, x), the truths with the queries or the memory permuted,
    and the same three with positions encoded on both sequences (``pe_*``)."""
    with seeded(seed * 7 + i), torch.no_grad():
        mha = MultiHeadAttention(D, H, cross=True).eval()
        draw = Draw(seed, f"l03/predict/{i}")
        y, x = draw.randn(B, T, D), draw.randn(B, S, D)                  # queries (B, T, D), memory (B, S, D)
        pos_y, pos_x = sinusoidal_encoding(T, D), sinusoidal_encoding(S, D)
        return {"out": mha(y, x)[0], QUERIES: mha(y[:, perm_q], x)[0], MEMORY: mha(y, x[:, perm_m])[0],
                "pe_out": mha(y + pos_y, x + pos_x)[0],
                "pe_" + QUERIES: mha(y[:, perm_q] + pos_y, x + pos_x)[0],
                "pe_" + MEMORY: mha(y + pos_y, x[:, perm_m] + pos_x)[0]}


def _diagnose_queries(pred: torch.Tensor, out: torch.Tensor, perm: list[int]) -> tuple[str, dict]:
    wrong_axis = [out[..., perm]] + ([out[perm]] if out.shape[0] >= len(perm) else [])
    if any(_close(pred, c, _TOL) for c in wrong_axis):
        return "l03.hint.predict_axis", {}
    if pred.shape != out.shape:
        return "l03.hint.shape", {"want": _shape(out), "got": _shape(pred)}
    inverse = torch.argsort(torch.tensor(perm)).tolist()
    for candidate, hint in ((out, "l03.hint.predict_same"), (out[:, inverse], "l03.hint.predict_inverse"),
                            (out.flip(1), "l03.hint.predict_flip")):
        if _close(pred, candidate, _TOL):
            return hint, {}
    return "l03.hint.predict_values", {}


def _rows_reordered(pred: torch.Tensor, out: torch.Tensor) -> bool:
    """Is every row of ``pred`` a row of ``out`` (same batch entry), in another order than out's?"""
    if pred.dim() != 3 or pred.shape[0] != out.shape[0] or pred.shape[2] != out.shape[2] or _close(pred, out, _TOL):
        return False
    gaps = (pred.double()[:, :, None] - out.double()[:, None]).abs().amax(-1)     # (B, rows of pred, T)
    return bool((gaps.amin(-1) <= _TOL).all())


def _diagnose_memory(pred: torch.Tensor, out: torch.Tensor, perm: list[int]) -> tuple[str, dict]:
    if _rows_reordered(pred, out):                  # out[:, perm], its inverse, a flip: as if self-attention
        return "l03.hint.predict_memory_moved", {}
    if pred.shape != out.shape:
        return "l03.hint.shape", {"want": _shape(out), "got": _shape(pred)}
    return "l03.hint.predict_memory_values", {}


def probe_predict_permuted_output(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, case in enumerate(predict_cases(seed)):
        data = predict_data(seed, i, *case)
        for permuted, perm in ((QUERIES, case[5]), (MEMORY, case[6])):
            results[f"{permuted}{i}"] = outcome = attempt(fn, data["out"].clone(), list(perm), permuted)
            if outcome.get("value") is None:
                return results
            # the same prediction with positions encoded
            results[f"pe_{permuted}{i}"] = attempt(fn, data["pe_out"].clone(), list(perm), permuted)
    return results


def _errors(permuted: str):
    def errors(error):
        if raises(error, "IndexError"):             # the memory's perm (S > T) used on out's positions
            return False, "l03.hint.predict_axis" if permuted == QUERIES else "l03.hint.predict_memory_moved", {}
        return None
    return errors


@judging
def judge_predict_permuted_output(results: dict, *, seed: int):
    miss = {QUERIES: 0.0, MEMORY: 0.0}
    for i, case in enumerate(predict_cases(seed)):
        data = predict_data(seed, i, *case)
        for permuted, perm, diagnose in ((QUERIES, case[5], _diagnose_queries), (MEMORY, case[6], _diagnose_memory)):
            pred = _tensor(value_of(results, f"{permuted}{i}", errors=_errors(permuted)))
            if not _close(pred, data[permuted], _TOL):
                return (False, *diagnose(pred, data["out"], perm))
            if changed_inputs(results, f"{permuted}{i}"):
                return False, "ex.changed_input", {"name": "out"}
            pred_pe, truth_pe = as_tensor(value_of(results, f"pe_{permuted}{i}")), data["pe_" + permuted]
            if pred_pe is None or pred_pe.shape != truth_pe.shape:
                raise Verdict(False, "ex.no_result")                     # the same function, the same kind of answer
            miss[permuted] = max(miss[permuted], (pred_pe.double() - truth_pe.double()).abs().max().item())
    return True, "l03.ok.predict", {"diff_queries": miss[QUERIES], "diff_memory": miss[MEMORY]}


PREDICT = Exercise("l03.predict_permuted_output", "l03.ex.predict", ("predict_permuted_output",),
                   probe_predict_permuted_output, judge_predict_permuted_output)


def evaluate_predict_permuted_output(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(out, perm, permuted)``: from cross-attention's output ``out`` = mha(y, x), predict its output
    when ``permuted`` ("queries" or "memory") is reordered by ``perm``, without running the model."""
    return evaluate_exercise(PREDICT, (fn,), lang, seed)

check_predict_permuted_output = printing(evaluate_predict_permuted_output)
