"""Exercise checkers for lesson 03 (positional encoding).

* ``check_sinusoidal_encoding(fn)``: ``fn(max_len, d_model)`` -> the (max_len, d_model) sin/cos table.
* ``check_add_positional_encoding(fn)``: ``fn(x (B, T, D), pe (max_len, D), start=0)`` -> x + PE of
  positions start … start + T - 1; ValueError naming the sizes when start + T > max_len.
* ``check_predict_permuted_output(fn)``: ``fn(out (B, T, D), perm, permuted)`` -> cross-attention's
  output when the queries or the memory are permuted, predicted from ``out`` alone (``l03_predict``).

Each checker compares with the package (``attnlab.sinusoidal_encoding``, ``MultiHeadAttention``),
recognises the typical mistakes and prints a hint for them, never the solution.
"""
from __future__ import annotations

import re
from typing import Callable

import torch

from ..positional import sinusoidal_encoding
from ._common import (Draw, Exercise, Feedback, NotDone, attempt, changed_inputs, error_of,
                      evaluate_exercise, judging, outcome_of, printing, raises, value_of)
from ._common import shape as _shape
from .l03_predict import (PREDICT, check_predict_permuted_output, evaluate_predict_permuted_output,  # noqa: F401
                          judge_predict_permuted_output, predict_cases as _predict_cases, predict_data as _predict_data,
                          probe_predict_permuted_output)
from .l03_table import _close, _tensor, diagnose_table as _diagnose_pe, first_wrong as _first_wrong


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
def _add_cases(seed: int) -> list[tuple[int, int, int, int, int]]:
    """(B, T, D, max_len, start) drawn from the seed: one sentence from position 0 (B < T, D > T: a
    slice by B or pe[:T, :T] shows), a batch from a later start with rows to spare on both sides (an
    off-by-one start shows by its values), the whole table from 0 (T = max_len, B ≠ T), one token
    from a later start, and a batch that ends on the table's last row (start + T = max_len)."""
    d = Draw(seed, "l03/add_pe")
    cases = []
    T = d.int(3, 7)
    cases.append((1, T, d.choice([8, 10, 12]), T + d.int(3, 12), 0))       # D > T: pe[:T, :T] cannot broadcast
    B = d.int(2, 3)
    T = d.int(B + 2, 10)
    start = d.choice([s for s in range(1, 9) if s != T - 1])                 # pe[start:T] never one row
    cases.append((B, T, d.choice([4, 6, 8, 10]), start + T + d.int(1, 6), start))
    T = d.int(5, 16)
    cases.append((d.choice([b for b in (2, 3, 4) if b != T]), T, d.choice([6, 8, 12]), T, 0))
    start = d.int(1, 9)
    cases.append((d.int(2, 4), 1, d.choice([4, 6, 8]), start + d.int(1, 6), start))
    T, start = d.int(3, 8), d.int(2, 7)
    cases.append((d.int(2, 4), T, d.choice([4, 6, 8]), start + T, start))
    return cases


def _range_case(seed: int) -> tuple[int, int, int, int, int]:
    """(B, T, D, max_len, start) with start + T > max_len: the function must refuse it (an unchecked
    slice then has 0 rows or T - 2 or fewer, so torch's own error shows instead of a broadcast)."""
    d = Draw(seed, "l03/add_pe/range")
    T, max_len = d.int(2, 6), d.int(10, 30)
    short = d.choice([k for k in (1, 2, 3) if T - k != 1])   # never one row left: it would broadcast
    return d.int(1, 3), T, d.choice([4, 6, 8]), max_len, max_len - T + short


def _add_inputs(seed: int, i, B: int, T: int, D: int, max_len: int, start: int) -> tuple[torch.Tensor, torch.Tensor]:
    return Draw(seed, f"l03/add_pe/{i}").randn(B, T, D), sinusoidal_encoding(max_len, D)


def _plus(x: torch.Tensor, rows: torch.Tensor):
    """x + rows where they broadcast (a candidate of a mistake), else None."""
    try:
        return x + rows
    except RuntimeError:
        return None


def _diagnose_add(out: torch.Tensor, x: torch.Tensor, pe: torch.Tensor, start: int) -> tuple[str, dict]:
    B, T, D = x.shape
    L = pe.shape[0]

    def like(rows) -> bool:
        candidate = _plus(x, rows)
        return candidate is not None and _close(out, candidate)
    if start > 0 and like(pe[start:T]):                                 # the slice ends at T, not start + T
        return "l03.hint.add_start_end", {"start": start, "T": T, "rows": max(0, T - start)}
    if out.shape != x.shape:
        if out.dim() == 3 and (out.shape[-1] == 2 * D or out.shape[1] == T + L):
            return "l03.hint.add_concat", {"got": _shape(out), "want": _shape(x)}
        return "l03.hint.shape", {"want": _shape(x), "got": _shape(out)}
    if B < T and (like(pe[:B]) or like(pe[start:start + B])):
        return "l03.hint.add_batch", {}
    if T == 1 and like(pe[start:start + 1, :1]):                        # pe[:T, :T] broadcasts when T = 1
        return "l03.hint.add_columns", {"D": D}
    if start > 0 and like(pe[:T]):
        return "l03.hint.add_start_ignored", {"start": start, "T": T}
    for rows in (pe[start + 1:start + T + 1], pe[max(start - 1, 0):start - 1 + T] if start else pe[:0], pe[L - T:]):
        if rows.shape[0] == T and like(rows):
            return "l03.hint.add_offset", {}
    return "l03.hint.add_values", {}


def probe_add_positional_encoding(fn: Callable, *, seed: int) -> dict:
    results = {}
    for i, case in enumerate(_add_cases(seed)):
        x, pe = _add_inputs(seed, i, *case)
        start = case[-1]                                # the default start = 0 is used on the first case
        results[f"case{i}"] = outcome = attempt(fn, x, pe) if i == 0 else attempt(fn, x, pe, start=start)
        if _stop(outcome):
            return results
    case = _range_case(seed)
    results["range"] = attempt(fn, *_add_inputs(seed, "range", *case), start=case[-1])
    return results


def _names_sizes(message: str, T: int, max_len: int, start: int) -> bool:
    """Does the error message name the table's size and the positions asked for?"""
    return str(max_len) in message and (str(start + T) in message or (str(start) in message and str(T) in message))


@judging
def judge_add_positional_encoding(results: dict, *, seed: int):
    for i, (B, T, D, max_len, start) in enumerate(_add_cases(seed)):
        x, pe = _add_inputs(seed, i, B, T, D, max_len, start)

        def errors(error, T=T, D=D, max_len=max_len, start=start):
            sizes = {"start": start, "T": T, "max_len": max_len, "end": start + T, "last": start + T - 1}
            if raises(error, "TypeError") and "start" in error["message"]:
                return False, "l03.hint.add_no_start", {}
            if raises(error, "ValueError"):
                return False, "l03.hint.add_range_strict", sizes
            if raises(error, "RuntimeError") and f"non-singleton dimension {x.dim() - 1}" in error["message"]:
                return False, "l03.hint.add_columns", {"D": D}          # the columns were cut too
            rows = re.search(r"size of tensor b \((\d+)\)", error["message"]) if raises(error, "RuntimeError") else None
            if rows and int(rows.group(1)) not in (T, max_len):
                return False, "l03.hint.add_start_end", {"start": start, "T": T, "rows": int(rows.group(1))}
            if raises(error, "RuntimeError") and T != max_len and "size" in error["message"]:
                return False, "l03.hint.add_slice", {"max_len": max_len, "T": T}
            return None
        out = _tensor(value_of(results, f"case{i}", errors=errors))
        if not _close(out, x + pe[start:start + T], 1e-5):
            return (False, *_diagnose_add(out, x, pe, start))
        if 0 in changed_inputs(results, f"case{i}"):
            return False, "l03.hint.add_inplace", {}
        if 1 in changed_inputs(results, f"case{i}"):
            return False, "ex.changed_input", {"name": "pe"}
    B, T, D, max_len, start = _range_case(seed)
    sizes = {"start": start, "T": T, "max_len": max_len, "end": start + T}
    outcome = outcome_of(results, "range")
    error = error_of(outcome)
    if outcome.get("not_done") or error is None:
        return False, "l03.hint.add_range", sizes
    if not raises(error, "ValueError"):
        return False, "l03.hint.add_range_error", {**sizes, "error": error["type"]}
    if not _names_sizes(error["message"], T, max_len, start):
        return False, "l03.hint.add_range_message", {**sizes, "message": error["message"][:120]}
    return True, "l03.ok.add_pe", {"start": start, "T": T, "max_len": max_len}


ADD = Exercise("l03.add_positional_encoding", "l03.ex.add_pe", ("add_positional_encoding",),
               probe_add_positional_encoding, judge_add_positional_encoding)


def evaluate_add_positional_encoding(fn: Callable, lang: str | None = None, *, seed: int | None = None) -> Feedback:
    """``fn(x (B, T, D), pe (max_len, D), start=0)`` must return x + pe[start:start + T] as a new
    tensor, and raise ValueError naming the sizes when start + T > max_len."""
    return evaluate_exercise(ADD, (fn,), lang, seed)

check_add_positional_encoding = printing(evaluate_add_positional_encoding)


__all__ = ["check_sinusoidal_encoding", "evaluate_sinusoidal_encoding", "check_add_positional_encoding",
           "evaluate_add_positional_encoding", "check_predict_permuted_output",
           "evaluate_predict_permuted_output", "NotDone", "EXERCISES"]

EXERCISES = (SINUSOIDAL, ADD, PREDICT)
