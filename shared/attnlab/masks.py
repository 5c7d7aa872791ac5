"""Attention masks. One convention everywhere: bool, True = may attend.

All masks broadcast to the scores' shape (B, H, T, S): T queries, S keys.
"""
from __future__ import annotations

import operator

import torch

from ._checks import check_tensor, positive_int
from .course.i18n import t


def padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """(B, S) token ids -> (B, 1, 1, S) mask, False on padding keys."""
    check_tensor("token_ids", token_ids, ndim=2)
    if token_ids.is_floating_point() or token_ids.dtype == torch.bool:
        raise TypeError(t("checks.token_ids_dtype", dtype=str(token_ids.dtype)))
    if isinstance(pad_id, bool):
        raise TypeError(t("checks.pad_id", got=f"bool {pad_id!r}"))
    try:
        pad_id = operator.index(pad_id)
    except TypeError:
        raise TypeError(t("checks.pad_id", got=f"{type(pad_id).__name__} {pad_id!r}")) from None
    return (token_ids != pad_id)[:, None, None, :]                  # (B, 1, 1, S)


def causal_mask(T: int, S: int | None = None, device=None) -> torch.Tensor:
    """(1, 1, T, S) lower-triangular mask: query i may attend to keys 0..i (+ S - T).

    With S > T (decoding with a cache of S - T earlier keys) the mask is aligned to the
    bottom right, so the last query sees every key. A plain tensor: what it allows is what it
    contains (``is_causal=True`` on the attention is the same rule, said as an argument).
    """
    T = positive_int("T", T)
    S = T if S is None else positive_int("S", S)
    if S < T:
        raise ValueError(t("checks.causal_s_lt_t", what="causal_mask", T=T, S=S))
    return lower_triangle(T, S, device)[None, None]                  # (1, 1, T, S)


def lower_triangle(T: int, S: int, device=None) -> torch.Tensor:
    """(T, S) bool, True where key j <= query i + (S - T): the causal rule, bottom-right aligned.
    Unchecked (the attention builds it on every causal call that needs a tensor)."""
    return torch.ones(T, S, dtype=torch.bool, device=device).tril_(S - T)


def decoder_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """Causal AND padding: (B, T) token ids -> (B, 1, T, T). No future, no padding."""
    check_tensor("token_ids", token_ids, ndim=2)
    T = token_ids.shape[1]
    return causal_mask(T, device=token_ids.device) & padding_mask(token_ids, pad_id)  # (B, 1, T, T)


def describe(mask: torch.Tensor) -> str:
    """A mask as rows of 0/1, for printing in lessons."""
    m = mask
    while m.dim() > 2:
        m = m[0]
    if m.dim() == 1:
        m = m[None]
    return "\n".join(" ".join("1" if v else "0" for v in row) for row in m.tolist())
