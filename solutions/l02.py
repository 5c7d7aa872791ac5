"""Reference solutions for lesson 02 (multi-head attention). For instructors; no notebook imports this."""
from __future__ import annotations

import torch


def split_heads(x: torch.Tensor, num_heads: int) -> torch.Tensor:
    """(B, T, D) -> (B, H, T, d_k): cut D into H contiguous blocks of d_k, then put the head axis first.

    The transpose is what keeps positions apart: viewing straight to (B, H, T, d_k) would
    read the memory of consecutive positions as rows of one head.
    """
    B, T, D = x.shape
    d_k = D // num_heads
    return x.view(B, T, num_heads, d_k).transpose(1, 2)


def merge_heads(x: torch.Tensor) -> torch.Tensor:
    """(B, H, T, d_k) -> (B, T, H * d_k): the inverse of split_heads (concatenate the heads).

    After the transpose the tensor is not contiguous, so use reshape (or contiguous().view).
    """
    B, H, T, d_k = x.shape
    return x.transpose(1, 2).reshape(B, T, H * d_k)


def mha_size(d_model: int, num_heads: int) -> tuple[int, int]:
    """(d_k, number of parameters) of multi-head attention with W_q, W_k, W_v, W_o and their biases.

    Four nn.Linear(d_model, d_model): 4 * (d_model**2 + d_model), whatever the number of heads.
    """
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    return d_model // num_heads, 4 * (d_model * d_model + d_model)
