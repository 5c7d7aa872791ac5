"""Scaled dot-product attention that returns its weights."""
from __future__ import annotations

import contextlib
import math

import torch
import torch.nn.functional as F

from ._checks import check_float, check_mask, check_same, check_tensor, probability, shape

LOW_PRECISION = (torch.float16, torch.bfloat16)


def scaled_dot_product_attention(q: torch.Tensor, k: torch.Tensor, v: torch.Tensor,
                                 mask: torch.Tensor | None = None, dropout_p: float = 0.0,
                                 training: bool = True, scale: float | None = None):
    r"""Attention(Q, K, V) = softmax(Q K^T / sqrt(d_k)) V, returning the weights too.

    Shapes: q (..., T, D), k (..., S, D), v (..., S, Dv), usually (B, H, T, D) with
    B batch, H heads, T queries, S keys. Returns ``(out (..., T, Dv), weights (..., T, S))``.

    ``mask`` is bool, **True = may attend**, with as many dimensions as the scores (..., T, S),
    each equal to the scores' or 1: ``padding_mask`` gives (B, 1, 1, S), ``causal_mask`` (1, 1, T, S).
    Masked scores are set to -inf before the softmax, so their weight is exactly 0. A query that
    may attend to no key at all gets all-zero weights and a zero output (as
    ``torch.nn.functional.scaled_dot_product_attention`` does), with zero gradients.

    ``dropout_p`` drops weights used for the output when ``training`` is True (as
    ``F.dropout(weights, dropout_p, training)``); the returned weights are taken before dropout.

    For float16/bfloat16 inputs (or under ``torch.autocast``) the scores, the softmax and the
    product with v are computed in float32 and rounded once at the end, so large scores do not
    overflow and the error stays that of the output's dtype.

    Reference::

        scores  = (q / sqrt(d_k)) @ k.transpose(-2, -1)        # (B, H, T, S)
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
    if q.shape[-1] == 0:
        raise ValueError(f"d_k (the last dimension of q and k) must be at least 1, got q {shape(q)}")
    if k.shape[-2] != v.shape[-2]:
        raise ValueError(f"k and v must have the same number of keys S, got k {shape(k)} and v {shape(v)}")
    if q.shape[:-2] != k.shape[:-2] or k.shape[:-2] != v.shape[:-2]:
        raise ValueError(f"q, k and v must share their leading (batch, head) dimensions, got "
                         f"{shape(q)}, {shape(k)}, {shape(v)}")
    if mask is not None:
        check_mask(mask, (*q.shape[:-1], k.shape[-2]), q.device)
    dropout_p = probability("dropout_p", dropout_p)
    if not isinstance(training, bool):
        raise TypeError(f"training must be a bool, got {type(training).__name__} {training!r}")
    if scale is not None and (isinstance(scale, bool) or not isinstance(scale, (int, float))):
        raise TypeError(f"scale must be a float or None, got {type(scale).__name__} {scale!r}")
    return attend(q, k, v, mask, dropout_p if training else 0.0, scale)


def autocast_dtype(device: torch.device) -> torch.dtype | None:
    """The dtype torch.autocast casts to on this device type, or None when autocast is off."""
    if device.type not in ("cpu", "cuda"):
        return None
    try:
        on = torch.is_autocast_enabled(device.type)
        return torch.get_autocast_dtype(device.type) if on else None
    except (TypeError, AttributeError):  # torch < 2.4
        if device.type == "cpu":
            return torch.get_autocast_cpu_dtype() if torch.is_autocast_cpu_enabled() else None
        return torch.get_autocast_gpu_dtype() if torch.is_autocast_enabled() else None


def attend(q, k, v, mask=None, dropout_p: float = 0.0, scale: float | None = None):
    """The computation of ``scaled_dot_product_attention``, without the checks.

    The reference formula of its docstring, plus the two things attention needs here, as named
    steps: float32 inside for float16/bfloat16 (``_float32_inside``), and zeros for a query that
    may attend to no key (``_keep_empty_rows_open``, ``_zero_empty_rows``).
    """
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    out_dtype, wide = _precisions(q, v)
    with _float32_inside(q.device, wide):
        if wide:
            q, k, v = q.float(), k.float(), v.float()
        scores = torch.matmul(q * scale, k.transpose(-2, -1))              # (B, H, T, S)
        if mask is not None:
            seen = mask.any(-1, keepdim=True)                             # (.., T, 1): sees some key
            scores = _keep_empty_rows_open(scores, mask, seen)            # masked_fill(~mask, -inf)
        weights = torch.softmax(scores, dim=-1)                           # rows sum to 1
        if mask is not None:
            weights = _zero_empty_rows(weights, seen)
        dropped = F.dropout(weights, dropout_p) if dropout_p > 0 else weights
        out = torch.matmul(dropped, v)                                    # (B, H, T, Dv)
    return out.to(out_dtype), weights.to(out_dtype)


def _precisions(q: torch.Tensor, v: torch.Tensor) -> tuple[torch.dtype, bool]:
    """The dtype of the result (v's, or autocast's), and whether to compute in float32 inside:
    float16/bfloat16 scores overflow (|score| > 65504) and a softmax rounded twice drifts."""
    cast = autocast_dtype(q.device) if q.dtype != torch.float64 else None   # autocast leaves float64 alone
    return cast or v.dtype, cast is not None or q.dtype in LOW_PRECISION


def _float32_inside(device: torch.device, wide: bool):
    """Autocast off inside (it would round the scores back to float16); nothing to do otherwise."""
    return torch.autocast(device.type, enabled=False) if wide else contextlib.nullcontext()


def _keep_empty_rows_open(scores: torch.Tensor, mask: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
    """-inf where the mask is False, except in a row that sees no key: a row of -inf would give
    NaN in the softmax, so it stays open here and is zeroed after it. In place outside autograd."""
    blocked = mask < seen                                                  # ~mask, but not in empty rows
    if scores.requires_grad:
        return scores.masked_fill(blocked, -math.inf)
    return scores.masked_fill_(blocked, -math.inf)


def _zero_empty_rows(weights: torch.Tensor, seen: torch.Tensor) -> torch.Tensor:
    """All-zero weights (so a zero output, with zero gradients) for a query that sees no key."""
    return weights * seen if weights.requires_grad else weights.mul_(seen)
