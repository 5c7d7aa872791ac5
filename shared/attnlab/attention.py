"""Scaled dot-product attention that returns its weights."""
from __future__ import annotations

import math

import torch
import torch.nn.functional as F

from ._checks import check_float, check_mask, check_same, check_tensor, shape


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None,
                                 dropout: float | torch.nn.Module | None = None,
                                 scale: float | None = None):
    r"""Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, returning the weights too.

    Shapes: q (..., T, D), k (..., S, D), v (..., S, Dv), usually (B, H, T, D) with
    B batch, H heads, T queries, S keys. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    ``mask`` is bool, **True = may attend**, broadcastable to (..., T, S). Masked scores
    are set to -inf before the softmax, so their weight is exactly 0. A query that may
    attend to no key at all gets all-zero weights and a zero output (as
    ``torch.nn.functional.scaled_dot_product_attention`` does), with finite gradients.

    ``dropout`` acts on the weights used for the output: an ``nn.Dropout`` module (active
    in training mode only) or a probability (always applied, like torch's ``dropout_p``).
    The returned weights are taken before dropout. The softmax runs in float32 for float16/bfloat16 inputs.

    Reference::

        scores  = q @ k.transpose(-2, -1) / sqrt(d_k)          # (B, H, T, S)
        scores  = scores.masked_fill(~mask, -inf)
        weights = softmax(scores, dim=-1)                      # rows sum to 1
        out     = weights @ v                                  # (B, H, T, Dv)
    """
    for name, t in (("q", q), ("k", k), ("v", v)):
        check_tensor(name, t, ndim=(2, 3, 4))
        check_float(name, t)
    check_same(q=q, k=k, v=v)
    if not (q.dim() == k.dim() == v.dim()):
        raise ValueError(f"q, k and v must have the same number of dimensions, got shapes "
                         f"{shape(q)}, {shape(k)}, {shape(v)}")
    if q.shape[-1] != k.shape[-1]:
        raise ValueError(f"q and k must share their last dimension d_k, got q {shape(q)} and k {shape(k)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys S, got k {shape(k)} and v {shape(v)}")
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ValueError(f"q, k and v must share their leading (batch, head) dimensions, got "
                         f"{shape(q)}, {shape(k)}, {shape(v)}")

    d_k = q.shape[-1]
    scale = 1.0 / math.sqrt(d_k) if scale is None else scale
    scores = torch.matmul(q, k.transpose(-2, -1)) * scale          # (B, H, T, S)
    if mask is not None:
        check_mask(mask, tuple(scores.shape), scores.device)
        scores = scores.masked_fill(~mask, float("-inf"))
    low_precision = scores.dtype in (torch.float16, torch.bfloat16)
    weights = torch.softmax(scores.float() if low_precision else scores, dim=-1)
    if mask is not None:
        # A fully masked row is softmax(-inf, ..., -inf) = NaN: make it zeros. The
        # backward pass of masked_fill zeroes those gradients too, so no NaN flows back.
        weights = weights.masked_fill(~mask, 0.0)
    weights = weights.to(v.dtype)

    attn = weights
    if dropout is not None:
        attn = dropout(weights) if isinstance(dropout, torch.nn.Module) else F.dropout(weights, p=float(dropout))
    return torch.matmul(attn, v), weights                           # (B, H, T, Dv), (B, H, T, S)
