"""Exercise checkers for lesson 03 (positional encoding).

* ``check_sinusoidal_encoding(fn)``: ``fn(max_len, d_model)`` -> the (max_len, d_model) sin/cos table.
* ``check_add_positional_encoding(fn)``: ``fn(x (B, T, D), pe (max_len, D))`` -> x + PE of the first T positions.
* ``check_predict_permuted_output(fn)``: ``fn(out (B, T, D), perm)`` -> the self-attention output of the
  permuted sentence, predicted from ``out`` alone (no positional encoding).

Each checker compares with the package (``attnlab.sinusoidal_encoding``, ``MultiHeadAttention``),
recognises the typical mistakes and prints a hint for them, never the solution.
"""
from __future__ import annotations

from typing import Callable

import torch

from ..multihead import MultiHeadAttention
from ..positional import sinusoidal_encoding
from ._common import (Draw, Exercise, Feedback, NotDone, Verdict, as_tensor, attempt, changed_inputs,
                      evaluate_exercise, judging, kind, printing, raises, seeded, value_of)
from ._common import shape as _shape
from .l03_table import diagnose_table as _diagnose_pe, first_wrong as _first_wrong


_TOL = 1e-4  # students may build the table in float32


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = _TOL) -> bool:
    """Same shape and every value within ``tol`` (an absolute tolerance: the tables lie in [-1, 1])."""
    return a.shape == b.shape and bool(((a.double() - b.double()).abs() <= tol).all())


def _tensor(value, key: str = "l03.hint.not_tensor") -> torch.Tensor:
    """The tensor (or numpy array) the student returned; a Verdict otherwise."""
    got = as_tensor(value)
    if got is None:
        raise Verdict(False, key, kind=kind(value))
    return got


def _stop(outcome: dict) -> bool:
    return outcome.get("value") is None


# ---------------------------------------------------------------------------------------------
# Exercise 1: the sinusoidal table
# ---------------------------------------------------------------------------------------------
def _pe_cases(seed: int) -> list[tuple[int, int]]:
    """(max_len, d_model), drawn from the seed, never square, d_model even (sin and cos in pairs) and
    none of the bases a student might use by mistake (10, 100, 1000); odd and even max_len, the first
    one even (a table built sideways, (d_model, max_len), is then recognised rather than failing)."""
    d = Draw(seed, "l03/sinusoidal")
    widths = [w for w in range(2, 41, 2) if w not in (10,)]
    cases = [(2 * d.int(3, 10), d.choice([w for w in widths if w >= 6])), (d.int(30, 64), d.choice(widths)),
             (d.int(2, 9), d.choice([w for w in widths if w >= 12])), (d.int(21, 45), d.choice(widths))]
    return [(L, D + 2 if L == D else D) for L, D in cases]


def probe_sinusoidal_encoding(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, (max_len, d_model) in enumerate(_pe_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, max_len, d_model)
        if _stop(outcome):
            break
    return results


@judging
def judge_sinusoidal_encoding(results: dict, *, seed: int):
    cases = _pe_cases(seed)
    for i, (max_len, d_model) in enumerate(cases):
        pe = _tensor(value_of(results, f"case{i}"))
        if tuple(pe.shape) == (d_model, max_len):
            return False, "l03.hint.pe_orientation", {"max_len": max_len, "d_model": d_model, "got": _shape(pe)}
        if tuple(pe.shape) != (max_len, d_model):
            return False, "l03.hint.shape", {"want": f"({max_len}, {d_model})", "got": _shape(pe)}
        if pe.is_complex():
            return False, "l03.hint.pe_values", _first_wrong(pe, max_len, d_model)
        pe = pe.double()
        if not torch.isfinite(pe).all():
            return False, "l03.hint.pe_nonfinite", {}
        if not _close(pe, sinusoidal_encoding(max_len, d_model, dtype=torch.float64)):
            return (False, *_diagnose_pe(pe, max_len, d_model))
    return True, "l03.ok.sinusoidal", {"n": len(cases)}


SINUSOIDAL = Exercise("l03.sinusoidal_encoding", "l03.ex.sinusoidal", ("my_sinusoidal_encoding",),
                      probe_sinusoidal_encoding, judge_sinusoidal_encoding)


def evaluate_sinusoidal_encoding(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(max_len, d_model)`` must return the (max_len, d_model) sinusoidal table."""
    return evaluate_exercise(SINUSOIDAL, (fn,), lang, seed)

check_sinusoidal_encoding = printing(evaluate_sinusoidal_encoding)


# ---------------------------------------------------------------------------------------------
# Exercise 2: adding the table to the embeddings
# ---------------------------------------------------------------------------------------------
def _add_cases(seed: int) -> list[tuple[int, int, int, int]]:
    """(B, T, D, max_len) drawn from the seed: one sentence, B < T (a slice by B shows), the whole
    table used (T = max_len, B ≠ T), and T = 1."""
    d = Draw(seed, "l03/add_pe")
    cases = []
    T = d.int(3, 7)
    cases.append((1, T, d.choice([8, 10, 12]), T + d.int(3, 12)))          # D > T: pe[:T, :T] cannot broadcast
    B = d.int(2, 3)
    T = d.int(B + 2, 10)
    cases.append((B, T, d.choice([4, 6, 8, 10]), T + d.int(1, 9)))
    T = d.int(5, 16)
    cases.append((d.choice([b for b in (2, 3, 4) if b != T]), T, d.choice([6, 8, 12]), T))
    cases.append((d.int(2, 4), 1, d.choice([4, 6, 8]), d.int(4, 12)))
    return cases


def _add_inputs(seed: int, i: int, B: int, T: int, D: int, max_len: int) -> tuple[torch.Tensor, torch.Tensor]:
    return Draw(seed, f"l03/add_pe/{i}").randn(B, T, D), sinusoidal_encoding(max_len, D)


def _diagnose_add(out: torch.Tensor, x: torch.Tensor, pe: torch.Tensor) -> tuple[str, dict]:
    B, T, D = x.shape
    if out.shape != x.shape:
        if out.dim() == 3 and (out.shape[-1] == 2 * D or out.shape[1] == T + pe.shape[0]):
            return "l03.hint.add_concat", {"got": _shape(out), "want": _shape(x)}
        return "l03.hint.shape", {"want": _shape(x), "got": _shape(out)}
    if B < T and _close(out, x + pe[:B]):
        return "l03.hint.add_batch", {}
    if T == 1 and _close(out, x + pe[:1, :1]):                        # pe[:T, :T] broadcasts when T = 1
        return "l03.hint.add_columns", {"D": D}
    for rows in (pe[1:T + 1], pe[pe.shape[0] - T:]):
        if rows.shape[0] == T and _close(out, x + rows):
            return "l03.hint.add_offset", {}
    return "l03.hint.add_values", {}


def probe_add_positional_encoding(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, case in enumerate(_add_cases(seed)):
        results[f"case{i}"] = outcome = attempt(fn, *_add_inputs(seed, i, *case))
        if _stop(outcome):
            break
    return results


@judging
def judge_add_positional_encoding(results: dict, *, seed: int):
    for i, (B, T, D, max_len) in enumerate(_add_cases(seed)):
        x, pe = _add_inputs(seed, i, B, T, D, max_len)

        def errors(error, T=T, D=D, max_len=max_len):
            if raises(error, "RuntimeError") and f"non-singleton dimension {x.dim() - 1}" in error["message"]:
                return False, "l03.hint.add_columns", {"D": D}          # the columns were cut too
            if raises(error, "RuntimeError") and T != max_len and "size" in error["message"]:
                return False, "l03.hint.add_slice", {"max_len": max_len, "T": T}
            return None
        out = _tensor(value_of(results, f"case{i}", errors=errors))
        if not _close(out, x + pe[:T], 1e-5):
            return (False, *_diagnose_add(out, x, pe))
        if 0 in changed_inputs(results, f"case{i}"):
            return False, "l03.hint.add_inplace", {}
        if 1 in changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "pe"}
    return True, "l03.ok.add_pe", {}


ADD = Exercise("l03.add_positional_encoding", "l03.ex.add_pe", ("add_positional_encoding",),
               probe_add_positional_encoding, judge_add_positional_encoding)


def evaluate_add_positional_encoding(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(x (B, T, D), pe (max_len, D))`` must return x + pe[:T] as a new tensor."""
    return evaluate_exercise(ADD, (fn,), lang, seed)

check_add_positional_encoding = printing(evaluate_add_positional_encoding)


# ---------------------------------------------------------------------------------------------
# Exercise 3: predicting the output of a permuted sentence
# ---------------------------------------------------------------------------------------------
def _predict_cases(seed: int) -> list[tuple[int, int, int, int, list[int]]]:
    """(B, T, D, H, perm) drawn from the seed: a permutation that moves every position (so neither
    the unchanged output nor its reverse nor the inverse permutation is right by chance)."""
    d = Draw(seed, "l03/predict")
    cases = []
    for B, T in ((d.int(2, 3), d.int(4, 7)), (1, d.int(3, 5)), (d.int(3, 4), d.int(5, 8))):
        while True:
            perm = d.perm(T)
            inverse = sorted(range(T), key=perm.__getitem__)
            if all(p != i for i, p in enumerate(perm)) and perm != inverse and perm != list(range(T))[::-1]:
                break
        D, H = d.choice([(8, 2), (12, 3), (16, 4), (12, 2)])
        cases.append((B, T, D, H, perm))
    return cases


def _predict_data(seed: int, i: int, B: int, T: int, D: int, H: int, perm: list[int]):
    """The layer's outputs (out, truth) for x and x[:, perm], then the same with positions encoded."""
    with seeded(seed * 7 + i), torch.no_grad():
        mha = MultiHeadAttention(D, H).eval()
        x = Draw(seed, f"l03/predict/{i}").randn(B, T, D)
        pos = sinusoidal_encoding(T, D)
        out, _ = mha(x)
        truth, _ = mha(x[:, perm])
        out_pe, _ = mha(x + pos)
        truth_pe, _ = mha(x[:, perm] + pos)
    return out, truth, out_pe, truth_pe


def _diagnose_predict(pred: torch.Tensor, out: torch.Tensor, perm: list[int]) -> tuple[str, dict]:
    wrong_axis = [out[..., perm]] + ([out[perm]] if out.shape[0] >= len(perm) else [])
    if any(_close(pred, c, 1e-5) for c in wrong_axis):
        return "l03.hint.predict_axis", {}
    if pred.shape != out.shape:
        return "l03.hint.shape", {"want": _shape(out), "got": _shape(pred)}
    inverse = torch.argsort(torch.tensor(perm)).tolist()
    candidates = (
        (out, "l03.hint.predict_same"),
        (out[:, inverse], "l03.hint.predict_inverse"),
        (out.flip(1), "l03.hint.predict_flip"),
    )
    for candidate, hint in candidates:
        if _close(pred, candidate, 1e-5):
            return hint, {}
    return "l03.hint.predict_values", {}


def probe_predict_permuted_output(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, case in enumerate(_predict_cases(seed)):
        out, _, out_pe, _ = _predict_data(seed, i, *case)
        perm = case[-1]
        results[f"case{i}"] = outcome = attempt(fn, out.clone(), list(perm))
        if _stop(outcome):
            break
        results[f"pe{i}"] = attempt(fn, out_pe.clone(), list(perm))   # the same prediction, positions encoded
    return results


@judging
def judge_predict_permuted_output(results: dict, *, seed: int):
    pe_miss = 0.0
    for i, case in enumerate(_predict_cases(seed)):
        out, truth, out_pe, truth_pe = _predict_data(seed, i, *case)
        perm = case[-1]

        def errors(error):
            return (False, "l03.hint.predict_axis", {}) if raises(error, "IndexError") else None
        pred = _tensor(value_of(results, f"case{i}", errors=errors))
        if not _close(pred, truth, 1e-5):
            return (False, *_diagnose_predict(pred, out, perm))
        if changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "out"}
        pred_pe = as_tensor(value_of(results, f"pe{i}"))
        if pred_pe is None or pred_pe.shape != truth_pe.shape:
            raise Verdict(False, "ex.no_result")                         # the same function, the same kind of answer
        pe_miss = max(pe_miss, (pred_pe.double() - truth_pe.double()).abs().max().item())
    return True, "l03.ok.predict", {"diff": pe_miss}


PREDICT = Exercise("l03.predict_permuted_output", "l03.ex.predict", ("predict_permuted_output",),
                   probe_predict_permuted_output, judge_predict_permuted_output)


def evaluate_predict_permuted_output(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(out, perm)``: from self-attention's output ``out`` (B, T, D) for x, predict its output for
    ``x[:, perm]`` (no positional encoding) without running the model."""
    return evaluate_exercise(PREDICT, (fn,), lang, seed)

check_predict_permuted_output = printing(evaluate_predict_permuted_output)


__all__ = ["check_sinusoidal_encoding", "evaluate_sinusoidal_encoding", "check_add_positional_encoding",
           "evaluate_add_positional_encoding", "check_predict_permuted_output",
           "evaluate_predict_permuted_output", "NotDone", "EXERCISES"]

EXERCISES = (SINUSOIDAL, ADD, PREDICT)
