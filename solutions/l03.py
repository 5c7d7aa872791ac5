"""Reference solutions for lesson 03 (positional encoding). For instructors; no notebook imports this.

Each function is what the exercise cell asks for; ``attnlab.exercises.l03`` checks it.
"""
from __future__ import annotations

import math

import torch


def my_sinusoidal_encoding(max_len: int, d_model: int) -> torch.Tensor:
    """The (max_len, d_model) table PE[pos, 2i] = sin(pos / 10000^(2i/d_model)), PE[pos, 2i+1] = cos(...).

    Rows are positions, columns dimensions; columns 2i and 2i+1 share one frequency.
    """
    pos = torch.arange(max_len, dtype=torch.float32)[:, None]                 # (max_len, 1)
    two_i = torch.arange(0, d_model, 2, dtype=torch.float32)                  # 0, 2, 4, ...
    freq = torch.exp(-two_i * math.log(10000.0) / d_model)                    # 1 / 10000^(2i/d)
    pe = torch.zeros(max_len, d_model)
    pe[:, 0::2] = torch.sin(pos * freq)                                       # even columns: sin
    pe[:, 1::2] = torch.cos(pos * freq)                                       # odd columns: cos
    return pe


def add_positional_encoding(x: torch.Tensor, pe: torch.Tensor, start: int = 0) -> torch.Tensor:
    """x (B, T, D) plus rows start ... start + T - 1 of the table pe (max_len, D), as a new tensor:
    the T tokens of x are at positions start, ..., start + T - 1 (a generating model feeds only its
    new tokens). ValueError naming the sizes when the table has too few rows."""
    T = x.shape[1]
    if start + T > pe.shape[0]:
        raise ValueError(f"start = {start}, T = {T}: the positions run past the table, "
                         f"which has max_len = {pe.shape[0]} rows")
    return x + pe[start:start + T]                                            # (T, D) broadcasts over B


def predict_permuted_output(out: torch.Tensor, perm: list[int], permuted: str) -> torch.Tensor:
    """Cross-attention out = f(y, x) (queries y, memory x; no positional encoding), with ``permuted``
    reordered by ``perm``:

    * "queries": each output row belongs to its query, so the rows move with them (equivariant):
      f(y[:, perm], x) = f(y, x)[:, perm];
    * "memory": the rows of K and V move together and each query's softmax-weighted sum does not
      depend on their order (invariant): f(y, x[:, perm]) = f(y, x).
    """
    if permuted == "queries":
        return out[:, perm]
    return out.clone()
