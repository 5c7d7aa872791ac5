"""Exercise checkers for lesson 03 (positional encoding).

* ``check_sinusoidal_encoding(fn)``: ``fn(max_len, d_model)`` -> the (max_len, d_model) sin/cos table.
* ``check_add_positional_encoding(fn)``: ``fn(x (B, T, D), pe (max_len, D))`` -> x + PE of the first T positions.
* ``check_predict_permuted_output(fn)``: ``fn(out (B, T, D), perm)`` -> the self-attention output of the
  permuted sentence, predicted from ``out`` alone (no positional encoding).

Each checker compares with the package (``attnlab.sinusoidal_encoding``, ``MultiHeadAttention``),
recognises the typical mistakes and prints a hint for them, never the solution.
"""
from __future__ import annotations

import math
from typing import Callable

import torch

from ..multihead import MultiHeadAttention
from ..positional import sinusoidal_encoding
from ._common import Feedback, NotDone, call_student, evaluate, printing, shape as _shape, type_name as _kind
from ._common import seed as _seed


_TOL = 1e-4  # students may build the table in float32


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = _TOL) -> bool:
    """Same shape and every value within ``tol`` (an absolute tolerance: the tables lie in [-1, 1])."""
    return a.shape == b.shape and bool(((a.double() - b.double()).abs() <= tol).all())


def _as_tensor(result):
    if isinstance(result, torch.Tensor):
        return result.detach()
    try:
        import numpy as np
        if isinstance(result, np.ndarray):
            return torch.from_numpy(result)
    except ImportError:  # pragma: no cover
        pass
    return None


# ---------------------------------------------------------------------------------------------
# Exercise 1: the sinusoidal table
# ---------------------------------------------------------------------------------------------
_PE_CASES = ((12, 8), (50, 16), (7, 32), (33, 6))     # (max_len, d_model), never square


def _pe_variant(max_len: int, d_model: int, *, exponent: str = "2i", base: float = 10000.0,
                swap: bool = False, halves: bool = False, start: int = 0) -> torch.Tensor:
    """The table with one deliberate mistake, to recognise what a student wrote.

    exponent: "2i" (right), "i" (pair number), "column" (odd columns use 2i+1), "zero" (integer division).
    """
    pos = torch.arange(start, start + max_len, dtype=torch.float64)[:, None]
    pair = torch.arange(d_model // 2, dtype=torch.float64)
    even = {"2i": 2 * pair, "i": pair, "column": 2 * pair, "zero": 0 * pair}[exponent] / d_model
    odd = (2 * pair + 1) / d_model if exponent == "column" else even
    sin, cos = torch.sin(pos / base ** even), torch.cos(pos / base ** odd)
    if halves:                                                  # torch.cat([sin, cos], dim=-1)
        return torch.cat((cos, sin) if swap else (sin, cos), dim=-1)
    pe = torch.empty(max_len, d_model, dtype=torch.float64)
    pe[:, 0::2], pe[:, 1::2] = (cos, sin) if swap else (sin, cos)
    return pe


_PE_MISTAKES = (
    ({"swap": True}, "l03.hint.pe_sin_cos"),
    ({"exponent": "i"}, "l03.hint.pe_exponent_i"),
    ({"exponent": "column"}, "l03.hint.pe_exponent_odd"),
    ({"exponent": "zero"}, "l03.hint.pe_integer"),
    ({"halves": True}, "l03.hint.pe_halves"),
    ({"halves": True, "swap": True}, "l03.hint.pe_halves"),
    ({"start": 1}, "l03.hint.pe_start"),
)


def _pe_bases(d_model: int):
    return ((math.e, "e"), (10.0, "10"), (100.0, "100"), (1000.0, "1000"), (float(d_model), "d_model"),
            (1e5, "100000"))


def _diagnose_pe(pe: torch.Tensor, max_len: int, d_model: int) -> tuple[str, dict]:
    for kwargs, hint in _PE_MISTAKES:
        if _close(pe, _pe_variant(max_len, d_model, **kwargs)):
            return hint, {}
    for base, name in _pe_bases(d_model):
        if _close(pe, _pe_variant(max_len, d_model, base=base)):
            return "l03.hint.pe_base", {"base": name}
    pos = torch.arange(max_len, dtype=torch.float64)
    first = pe[:, :2].double()
    if _close(first, torch.stack([torch.cos(pos), torch.sin(pos)], 1)):
        return "l03.hint.pe_sin_cos", {}
    if _close(first, torch.stack([torch.sin(pos), torch.cos(pos)], 1)):
        return "l03.hint.pe_frequencies", {}
    ref = sinusoidal_encoding(max_len, d_model, dtype=torch.float64)
    bad = ((pe.double() - ref).abs() > _TOL).nonzero()[0].tolist()
    return "l03.hint.pe_values", {"pos": bad[0], "col": bad[1], "max_len": max_len, "d_model": d_model}


def evaluate_sinusoidal_encoding(fn: Callable, lang: str | None = None) -> Feedback:
    """``fn(max_len, d_model)`` must return the (max_len, d_model) sinusoidal table."""
    def check():
        for max_len, d_model in _PE_CASES:
            result = call_student(fn, max_len, d_model)
            pe = _as_tensor(result)
            if pe is None:
                return False, "l03.hint.not_tensor", {"kind": _kind(result)}
            if tuple(pe.shape) == (d_model, max_len):
                return False, "l03.hint.pe_orientation", {"max_len": max_len, "d_model": d_model, "got": _shape(pe)}
            if tuple(pe.shape) != (max_len, d_model):
                return False, "l03.hint.shape", {"want": f"({max_len}, {d_model})", "got": _shape(pe)}
            pe = pe.double()
            if not torch.isfinite(pe).all():
                return False, "l03.hint.pe_nonfinite", {}
            if not _close(pe, sinusoidal_encoding(max_len, d_model, dtype=torch.float64)):
                return (False, *_diagnose_pe(pe, max_len, d_model))
        return True, "l03.ok.sinusoidal", {"n": len(_PE_CASES)}
    return evaluate("l03.ex.sinusoidal", check, lang)

check_sinusoidal_encoding = printing(evaluate_sinusoidal_encoding)


# ---------------------------------------------------------------------------------------------
# Exercise 2: adding the table to the embeddings
# ---------------------------------------------------------------------------------------------
_ADD_CASES = ((1, 7, 8, 16), (2, 5, 8, 16), (3, 16, 8, 16), (2, 1, 4, 10))   # (B, T, D, max_len)


def _seeded_randn(seed: int, *shape: int) -> torch.Tensor:
    g = torch.Generator().manual_seed(seed)
    return torch.randn(*shape, generator=g)


def _diagnose_add(out: torch.Tensor, x: torch.Tensor, pe: torch.Tensor) -> tuple[str, dict]:
    B, T, D = x.shape
    if out.shape != x.shape:
        if out.dim() == 3 and (out.shape[-1] == 2 * D or out.shape[1] == T + pe.shape[0]):
            return "l03.hint.add_concat", {"got": _shape(out), "want": _shape(x)}
        return "l03.hint.shape", {"want": _shape(x), "got": _shape(out)}
    if B < T and _close(out, x + pe[:B]):
        return "l03.hint.add_batch", {}
    for rows in (pe[1:T + 1], pe[pe.shape[0] - T:]):
        if rows.shape[0] == T and _close(out, x + rows):
            return "l03.hint.add_offset", {}
    return "l03.hint.add_values", {}


def evaluate_add_positional_encoding(fn: Callable, lang: str | None = None) -> Feedback:
    """``fn(x (B, T, D), pe (max_len, D))`` must return x + pe[:T] as a new tensor."""
    def check():
        for n, (B, T, D, max_len) in enumerate(_ADD_CASES):
            x = _seeded_randn(100 + n, B, T, D)
            pe = sinusoidal_encoding(max_len, D)
            x_given, pe_given = x.clone(), pe.clone()
            try:
                result = call_student(fn, x_given, pe_given)
            except RuntimeError as e:
                if f"non-singleton dimension {x.dim() - 1}" in str(e):       # the columns were cut too
                    return False, "l03.hint.add_columns", {"D": D}
                if T != max_len and "size" in str(e):
                    return False, "l03.hint.add_slice", {"max_len": max_len, "T": T}
                raise
            out = _as_tensor(result)
            if out is None:
                return False, "l03.hint.not_tensor", {"kind": _kind(result)}
            if not _close(out, x + pe[:T], 1e-5):
                return (False, *_diagnose_add(out, x, pe))
            if not torch.equal(x_given, x):
                return False, "l03.hint.add_inplace", {}
        return True, "l03.ok.add_pe", {}
    return evaluate("l03.ex.add_pe", check, lang)

check_add_positional_encoding = printing(evaluate_add_positional_encoding)


# ---------------------------------------------------------------------------------------------
# Exercise 3: predicting the output of a permuted sentence
# ---------------------------------------------------------------------------------------------
_PREDICT_CASES = ((2, 5, [3, 0, 4, 1, 2]), (1, 3, [1, 2, 0]), (3, 4, [2, 3, 1, 0]))  # (B, T, perm)
_PREDICT_D, _PREDICT_H = 16, 4


def _attention_model(seed: int) -> MultiHeadAttention:
    _seed(seed)                        # evaluate runs the checker on a forked random state
    return MultiHeadAttention(_PREDICT_D, _PREDICT_H).eval()


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


def evaluate_predict_permuted_output(fn: Callable, lang: str | None = None) -> Feedback:
    """``fn(out, perm)``: from self-attention's output ``out`` (B, T, D) for x, predict its output for
    ``x[:, perm]`` (no positional encoding) without running the model."""
    def check():
        pe_miss = 0.0
        for n, (B, T, perm) in enumerate(_PREDICT_CASES):
            mha = _attention_model(300 + n)
            x = _seeded_randn(200 + n, B, T, _PREDICT_D)
            with torch.no_grad():
                out, _ = mha(x)
                truth, _ = mha(x[:, perm])
                pos = sinusoidal_encoding(T, _PREDICT_D)
                out_pe, _ = mha(x + pos)
                truth_pe, _ = mha(x[:, perm] + pos)
            try:
                result = call_student(fn, out.clone(), list(perm))
            except IndexError:
                return False, "l03.hint.predict_axis", {}
            pred = _as_tensor(result)
            if pred is None:
                return False, "l03.hint.not_tensor", {"kind": _kind(result)}
            if not _close(pred, truth, 1e-5):
                return (False, *_diagnose_predict(pred, out, perm))
            # The same prediction, once positions are encoded: how far off is it?
            pred_pe = _as_tensor(call_student(fn, out_pe.clone(), list(perm)))
            pe_miss = max(pe_miss, (pred_pe.double() - truth_pe.double()).abs().max().item())
        return True, "l03.ok.predict", {"diff": pe_miss}
    return evaluate("l03.ex.predict", check, lang)

check_predict_permuted_output = printing(evaluate_predict_permuted_output)


__all__ = ["check_sinusoidal_encoding", "evaluate_sinusoidal_encoding", "check_add_positional_encoding",
           "evaluate_add_positional_encoding", "check_predict_permuted_output",
           "evaluate_predict_permuted_output", "NotDone"]
