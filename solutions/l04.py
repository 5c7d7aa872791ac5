"""Reference solutions for lesson 04 (attention masks). For instructors; no notebook imports this.

Convention of the course: a mask is bool, True = may attend, and broadcasts to the scores'
shape (B, H, T, S).
"""
from __future__ import annotations

import torch


def causal_mask(T: int) -> torch.Tensor:
    """(1, 1, T, T) bool: query i may attend to keys 0..i (the lower triangle, diagonal included).

    The diagonal matters: a token must see itself, otherwise query 0 sees nothing and its
    softmax row is NaN. torch.triu would keep the future instead of the past.
    """
    return torch.tril(torch.ones(T, T, dtype=torch.bool))[None, None]


def padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """(B, S) token ids -> (B, 1, 1, S) bool, False on padding keys.

    The padding is hidden as keys (columns of the scores), so the mask varies along the last
    axis; the two 1s broadcast over the heads and the queries.
    """
    return (token_ids != pad_id)[:, None, None, :]


def decoder_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """(B, T) token ids -> (B, 1, T, T): causal AND padding (no future, no padding).

    The fix of the lesson's buggy version, which combined the masks with ``|``.
    """
    T = token_ids.shape[1]
    causal = torch.tril(torch.ones(T, T, dtype=torch.bool, device=token_ids.device))[None, None]
    padding = (token_ids != pad_id)[:, None, None, :]
    return causal & padding


def mha_mask(mask: torch.Tensor, num_heads: int) -> torch.Tensor:
    """Course mask (B, 1, T, S), True = may attend -> ``attn_mask`` for nn.MultiheadAttention.

    nn.MultiheadAttention wants a bool mask with True = BLOCKED, 2-D (T, S) or 3-D
    (B * num_heads, T, S) with the first index b * num_heads + h: invert, repeat over the
    heads (expand), then flatten batch and heads together.
    """
    B, _, T, S = mask.shape
    return (~mask).expand(B, num_heads, T, S).reshape(B * num_heads, T, S)
