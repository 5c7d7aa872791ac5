"""Attention masks. One convention everywhere: bool, True = may attend.

All masks broadcast to the scores' shape (B, H, T, S): T queries, S keys.
"""
from __future__ import annotations

import operator

import torch

from ._checks import check_tensor, positive_int


def padding_mask(token_ids: torch.Tensor, pad_id: int = 0) -> torch.Tensor:
    """(B, S) token ids -> (B, 1, 1, S) mask, False on padding keys."""
    check_tensor("token_ids", token_ids, ndim=2)
    if token_ids.is_floating_point() or token_ids.dtype == torch.bool:
        raise TypeError(f"token_ids must be an integer tensor, got dtype {token_ids.dtype}")
    if isinstance(pad_id, bool):
        raise TypeError(f"pad_id must be an int (the id of the padding token), got bool {pad_id!r}")
    try:
        pad_id = operator.index(pad_id)
    except TypeError:
        raise TypeError(f"pad_id must be an int (the id of the padding token), "
                        f"got {type(pad_id).__name__} {pad_id!r}") from None
    return (token_ids != pad_id)[:, None, None, :]                  # (B, 1, 1, S)


def causal_mask(T: int, S: int | None = None, device=None) -> torch.Tensor:
    """(1, 1, T, S) lower-triangular mask: query i may attend to keys 0..i (+ S - T).

    With S > T (decoding with a cache of S - T earlier keys) the mask is aligned to the
    bottom right, so the last query sees every key.
    """
    T = positive_int("T", T)
    S = T if S is None else positive_int("S", S)
    if S < T:
        raise ValueError(f"causal_mask needs S >= T (keys include every query), got T={T}, S={S}")
    ones = torch.ones(T, S, dtype=torch.bool, device=device)
    mask = torch.tril(ones, diagonal=S - T)[None, None]              # (1, 1, T, S)
    if S == T:                                                       # what torch's is_causal=True means
        mask._attnlab_causal_version = mask._version
    return mask


def is_plain_causal(mask: torch.Tensor) -> bool:
    """True for a square mask made by ``causal_mask(T)`` and not changed in place since.

    The multi-head attention's fast path then calls torch's fused kernel with ``is_causal=True``
    instead of an explicit mask (the same result, less work). A copy, a slice, a combination
    (``&`` with a padding mask) or an in-place edit is an ordinary mask again.
    """
    return getattr(mask, "_attnlab_causal_version", None) == mask._version


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
