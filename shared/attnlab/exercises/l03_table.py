"""Lesson 03, exercise 1 (the sinusoidal table): which typical mistake gives the table a student's
``my_sinusoidal_encoding`` returned (the judge's side of ``l03.check_sinusoidal_encoding``): sin
and cos swapped, the exponent i instead of 2i (or 2i+1 on the odd columns, or an integer division),
torch.cat of the two halves, positions from 1, another base; else the first wrong entry.
"""
from __future__ import annotations

import math

import torch

from ._common import Verdict, as_tensor, kind

from ..positional import sinusoidal_encoding

_TOL = 1e-4  # students may build the table in float32


def _close(a: torch.Tensor, b: torch.Tensor, tol: float = _TOL) -> bool:
    """Same shape and every value within ``tol`` (an absolute tolerance: the tables lie in [-1, 1])."""
    return a.shape == b.shape and bool(((a.double() - b.double()).abs() <= tol).all())


def _tensor(value, key: str = "l03.hint.not_tensor") -> torch.Tensor:
    """The tensor (or numpy array) the student returned; a Verdict otherwise (lesson 03's judges)."""
    got = as_tensor(value)
    if got is None:
        raise Verdict(False, key, kind=kind(value))
    return got


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


def diagnose_table(pe: torch.Tensor, max_len: int, d_model: int) -> tuple[str, dict]:
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
    return "l03.hint.pe_values", first_wrong(pe, max_len, d_model)


def first_wrong(pe: torch.Tensor, max_len: int, d_model: int) -> dict:
    """Where the table first differs from the reference (it does differ: the caller checked)."""
    ref = sinusoidal_encoding(max_len, d_model, dtype=torch.float64)
    wrong = (~((pe.to(torch.complex128) - ref).abs() <= _TOL)).nonzero() if pe.is_complex() else \
        (~((pe.double() - ref).abs() <= _TOL)).nonzero()
    pos, col = wrong[0].tolist() if len(wrong) else (0, 0)              # (a complex table: its type is wrong)
    return {"pos": pos, "col": col, "max_len": max_len, "d_model": d_model}
