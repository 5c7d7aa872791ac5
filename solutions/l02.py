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


def mha_size(d_model: int, num_heads: int, num_kv_heads: int) -> tuple[int, int]:
    """(d_k, number of parameters) of grouped-query attention: W_Q, W_K, W_V, W_O and their biases.

    The queries have num_heads heads of d_k = d_model // num_heads; the keys and values only
    num_kv_heads heads of d_k, so W_K and W_V are d_model × (num_kv_heads · d_k) and W_Q, W_O stay
    d_model × d_model. With num_kv_heads == num_heads: 4 * (d_model**2 + d_model), the lesson's count.
    """
    if d_model % num_heads != 0:
        raise ValueError(f"d_model={d_model} is not divisible by num_heads={num_heads}")
    if num_heads % num_kv_heads != 0:
        raise ValueError(f"num_heads={num_heads} is not divisible by num_kv_heads={num_kv_heads}")
    d_k = d_model // num_heads
    kv_width = num_kv_heads * d_k
    return d_k, 2 * (d_model * d_model + d_model) + 2 * (d_model * kv_width + kv_width)
