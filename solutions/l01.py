"""Reference solutions for the exercises of lesson 01 (self-attention).

For instructors: no notebook imports this file. Checked by tests/test_exercises_l01.py with
attnlab.exercises.l01.check_softmax / check_attention / check_dot_std.
"""
from __future__ import annotations

import math

import torch


def my_softmax(x: torch.Tensor) -> torch.Tensor:
    """Softmax over the last dimension, numerically stable.

    softmax(z) = softmax(z - c) for any constant c per row, so subtract each row's maximum:
    the largest exponent is then exp(0) = 1 (no overflow) and every row keeps at least one
    term equal to 1 in its sum (no 0/0).
    """
    z = x - x.amax(dim=-1, keepdim=True)
    e = torch.exp(z)
    return e / e.sum(dim=-1, keepdim=True)


def my_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor):
    """Scaled dot-product attention: returns (softmax(q kᵀ / √d_k) v, weights).

    Shapes: q (..., T, d_k), k (..., S, d_k), v (..., S, d_v) -> out (..., T, d_v), weights (..., T, S).
    """
    d_k = q.shape[-1]
    scores = q @ k.transpose(-2, -1) / math.sqrt(d_k)   # (..., T, S)
    weights = torch.softmax(scores, dim=-1)              # each query's row sums to 1
    return weights @ v, weights


def dot_std(d_k: int, sigma: float = 1.0) -> float:
    """Standard deviation of q·k for q, k in R^d_k with i.i.d. components of mean 0, std sigma.

    Var(q_i k_i) = E[q_i²] E[k_i²] = sigma⁴, and the d_k terms are independent, so
    Var(q·k) = d_k sigma⁴ and std(q·k) = sigma² √d_k.
    """
    return sigma ** 2 * math.sqrt(d_k)
