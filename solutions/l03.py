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


def add_positional_encoding(x: torch.Tensor, pe: torch.Tensor) -> torch.Tensor:
    """x (B, T, D) plus the first T rows of the table pe (max_len, D), as a new tensor."""
    T = x.shape[1]
    return x + pe[:T]                                                         # (T, D) broadcasts over B


def predict_permuted_output(out: torch.Tensor, perm: list[int]) -> torch.Tensor:
    """Self-attention (no positional encoding) is permutation-equivariant: f(x[:, perm]) = f(x)[:, perm].

    So the output of the permuted sentence is the output of the original, reordered the same way.
    """
    return out[:, perm]
